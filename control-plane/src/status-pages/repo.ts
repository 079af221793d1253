import { randomToken } from '../accounts/sessions.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';

/** 128 random bits: a status page is public to whoever has the address, and to no one else. */
export const newSlug = () => randomToken().slice(0, 22);

/** A status_pages row; timestamps are Postgres text. */
export interface PageRecord {
  id: string;
  project_id: string;
  slug: string;
  title: string;
  description: string;
  auto_publish_incidents: boolean;
  /** null: only the slug address. */
  custom_domain: string | null;
  /** null: no password (ADR 0041). */
  password_hash: string | null;
  /** null: any client address. */
  ip_allowlist: string[] | null;
  created_at: string;
  updated_at: string;
}

export interface GroupRecord {
  id: string;
  status_page_id: string;
  name: string;
  position: number;
}

export interface ComponentRecord {
  status_page_id: string;
  /** null: in no group (reserved; the API always names one). */
  group_id: string | null;
  type: 'monitor' | 'heartbeat';
  subject_id: string;
  display_name: string | null;
  description: string;
  position: number;
}

/** What a create or an update writes of the page itself. */
export type PageWrite = Pick<
  PageRecord,
  'title' | 'description' | 'auto_publish_incidents' | 'custom_domain' | 'password_hash' | 'ip_allowlist'
>;

/** A group as written: its components in order. */
export interface GroupWrite {
  name: string;
  components: { type: 'monitor' | 'heartbeat'; id: string; display_name: string | null; description: string }[];
}

const columns = (db: Db) =>
  db`id, project_id, slug, title, description, auto_publish_incidents, custom_domain, password_hash, ip_allowlist, created_at, updated_at`;

export async function listPages(sql: Sql, projectIds: readonly string[], page: PageQuery) {
  const projects = arrayLiteral(projectIds);
  const rows = await sql<(PageRecord & { total: number })[]>`
    select ${columns(sql)}, count(*) over ()::int as total from status_pages
    where project_id = any(${projects}::uuid[])
    order by created_at, id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ??
    (await sql<{ n: number }[]>`select count(*)::int as n from status_pages where project_id = any(${projects}::uuid[])`)[0]!.n;
  return { items: rows.map(({ total: _, ...r }) => r), total };
}

export async function findPage(db: Db, id: string, projectIds: readonly string[], forUpdate = false): Promise<PageRecord | undefined> {
  const [row] = await db<PageRecord[]>`
    select ${columns(db)} from status_pages where id = ${id} and project_id = any(${arrayLiteral(projectIds)}::uuid[])
    ${forUpdate ? db`for update` : db``}`;
  return row;
}

export async function findPageBySlug(sql: Sql, slug: string): Promise<PageRecord | undefined> {
  const [row] = await sql<PageRecord[]>`select ${columns(sql)} from status_pages where slug = ${slug}`;
  return row;
}

/** The project's page creations one at a time (for the count per project), until the transaction ends. */
export async function lockProjectPages(tx: Db, projectId: string): Promise<number> {
  await tx`select pg_advisory_xact_lock(hashtext('status_pages'), hashtext(${projectId}))`;
  const [row] = await tx<{ n: number }[]>`select count(*)::int as n from status_pages where project_id = ${projectId}`;
  return row!.n;
}

export async function insertPage(tx: Db, projectId: string, w: PageWrite, now: Date): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into status_pages (project_id, slug, title, description, auto_publish_incidents, custom_domain, password_hash, ip_allowlist,
      created_at, updated_at)
    values (${projectId}, ${newSlug()}, ${w.title}, ${w.description}, ${w.auto_publish_incidents}, ${w.custom_domain}, ${w.password_hash},
      ${w.ip_allowlist && arrayLiteral(w.ip_allowlist)}::text[], ${now}, ${now})
    returning id`;
  return row!.id;
}

export async function updatePage(tx: Db, id: string, w: PageWrite, now: Date): Promise<void> {
  await tx`
    update status_pages set title = ${w.title}, description = ${w.description}, auto_publish_incidents = ${w.auto_publish_incidents},
      custom_domain = ${w.custom_domain}, password_hash = ${w.password_hash},
      ip_allowlist = ${w.ip_allowlist && arrayLiteral(w.ip_allowlist)}::text[], updated_at = ${now}
    where id = ${id}`;
}

/** A new address; the old one stops working at once. */
export async function changeSlug(db: Db, id: string, now: Date): Promise<void> {
  await db`update status_pages set slug = ${newSlug()}, updated_at = ${now} where id = ${id}`;
}

export async function deletePage(db: Db, id: string): Promise<void> {
  await db`delete from status_pages where id = ${id}`;
}

export async function groupsOf(db: Db, pageIds: readonly string[]): Promise<GroupRecord[]> {
  if (pageIds.length === 0) return [];
  return db<GroupRecord[]>`
    select id, status_page_id, name, position from status_page_groups
    where status_page_id = any(${arrayLiteral(pageIds)}::uuid[])
    order by status_page_id, position, id`;
}

export async function componentsOf(db: Db, pageIds: readonly string[]): Promise<ComponentRecord[]> {
  if (pageIds.length === 0) return [];
  return db<ComponentRecord[]>`
    select status_page_id, group_id,
      case when monitor_id is not null then 'monitor' else 'heartbeat' end as type,
      coalesce(monitor_id, heartbeat_id) as subject_id, display_name, description, position
    from status_page_components
    where status_page_id = any(${arrayLiteral(pageIds)}::uuid[])
    order by status_page_id, position, id`;
}

/**
 * Makes the page's groups and components those given, in order. A group whose name is kept (in
 * any case) keeps its row, and a monitor or heartbeat still on the page keeps its component row,
 * so what refers to them survives an edit; the others are removed.
 */
export async function replaceGroups(tx: Db, pageId: string, groups: readonly GroupWrite[]): Promise<void> {
  const existing = new Map((await groupsOf(tx, [pageId])).map((g) => [g.name.toLowerCase(), g.id]));
  const keptGroups: string[] = [];
  const rows: {
    group_id: string;
    monitor_id: string | null;
    heartbeat_id: string | null;
    display_name: string | null;
    description: string;
    position: number;
  }[] = [];
  for (const [position, g] of groups.entries()) {
    let id = existing.get(g.name.toLowerCase());
    if (id) {
      await tx`update status_page_groups set name = ${g.name}, position = ${position} where id = ${id}`;
    } else {
      const [row] = await tx<{ id: string }[]>`
        insert into status_page_groups (status_page_id, name, position) values (${pageId}, ${g.name}, ${position}) returning id`;
      id = row!.id;
    }
    keptGroups.push(id);
    for (const c of g.components) {
      rows.push({
        group_id: id,
        monitor_id: c.type === 'monitor' ? c.id : null,
        heartbeat_id: c.type === 'heartbeat' ? c.id : null,
        display_name: c.display_name,
        description: c.description,
        position: rows.length,
      });
    }
  }
  const kept: string[] = [];
  for (const type of ['monitor', 'heartbeat'] as const) {
    const of = rows.filter((r) => (type === 'monitor' ? r.monitor_id : r.heartbeat_id) !== null);
    if (of.length === 0) continue;
    const values = of.map((r) => ({ status_page_id: pageId, ...r }));
    const cols = ['status_page_id', 'group_id', 'monitor_id', 'heartbeat_id', 'display_name', 'description', 'position'] as const;
    const upserted = await tx<{ id: string }[]>`
      insert into status_page_components ${tx(values, ...cols)}
      on conflict (status_page_id, ${tx(`${type}_id`)}) do update set group_id = excluded.group_id,
        display_name = excluded.display_name, description = excluded.description, position = excluded.position
      returning id`;
    kept.push(...upserted.map((r) => r.id));
  }
  await tx`delete from status_page_components where status_page_id = ${pageId} and not (id = any(${arrayLiteral(kept)}::uuid[]))`;
  await tx`delete from status_page_groups where status_page_id = ${pageId} and not (id = any(${arrayLiteral(keptGroups)}::uuid[]))`;
}

/** The slug of each page that answers at a host name of its own. */
export async function customDomains(sql: Sql): Promise<Map<string, string>> {
  const rows = await sql<{ custom_domain: string; slug: string }[]>`
    select custom_domain, slug from status_pages where custom_domain is not null`;
  return new Map(rows.map((r) => [r.custom_domain, r.slug]));
}
