import type { Sql } from '../platform/db/sql.ts';
import { randomToken } from '../accounts/sessions.ts';

export type BadgeSubject = { monitorId: string } | { heartbeatId: string };

const column = (s: BadgeSubject) => ('monitorId' in s ? { monitor_id: s.monitorId } : { heartbeat_id: s.heartbeatId });

/** 128 random bits in base64url: a badge address cannot be guessed from anything. */
const newSlug = () => randomToken().slice(0, 22);

export async function badgeSlug(sql: Sql, s: BadgeSubject): Promise<string | null> {
  const [row] =
    'monitorId' in s
      ? await sql<{ slug: string }[]>`select slug from badges where monitor_id = ${s.monitorId}`
      : await sql<{ slug: string }[]>`select slug from badges where heartbeat_id = ${s.heartbeatId}`;
  return row?.slug ?? null;
}

/** The badge of a subject in one of the projects given; null when it has none or is in none of them. */
export async function badgeSlugIn(sql: Sql, s: BadgeSubject, projectIds: readonly string[]): Promise<string | null> {
  const projects = sql.array([...projectIds]);
  const [row] =
    'monitorId' in s
      ? await sql<{ slug: string }[]>`
          select b.slug from badges b join monitors m on m.id = b.monitor_id
          where b.monitor_id = ${s.monitorId} and m.project_id = any(${projects}::uuid[])`
      : await sql<{ slug: string }[]>`
          select b.slug from badges b join heartbeats h on h.id = b.heartbeat_id
          where b.heartbeat_id = ${s.heartbeatId} and h.project_id = any(${projects}::uuid[])`;
  return row?.slug ?? null;
}

export async function createBadge(sql: Sql, s: BadgeSubject): Promise<string> {
  const existing = await badgeSlug(sql, s);
  if (existing) return existing;
  const [row] = await sql<
    { slug: string }[]
  >`insert into badges ${sql({ slug: newSlug(), ...column(s) })} on conflict do nothing returning slug`;
  return row?.slug ?? (await badgeSlug(sql, s))!;
}

/** Whether there was a badge to delete. */
export async function deleteBadge(sql: Sql, s: BadgeSubject): Promise<boolean> {
  const deleted =
    'monitorId' in s
      ? await sql`delete from badges where monitor_id = ${s.monitorId}`
      : await sql`delete from badges where heartbeat_id = ${s.heartbeatId}`;
  return deleted.count > 0;
}

export interface FoundBadge {
  monitor_id: string | null;
  heartbeat_id: string | null;
  /** The project of the monitor or heartbeat. */
  project_id: string;
}

export async function findBadge(sql: Sql, slug: string): Promise<FoundBadge | undefined> {
  const [row] = await sql<FoundBadge[]>`
    select b.monitor_id, b.heartbeat_id, coalesce(m.project_id, h.project_id) as project_id
    from badges b
    left join monitors m on m.id = b.monitor_id
    left join heartbeats h on h.id = b.heartbeat_id
    where b.slug = ${slug}`;
  return row?.project_id ? row : undefined;
}

/** A public page by its address, and the component of it showing this monitor or heartbeat (null: none). */
export interface FoundPageComponent {
  project_id: string;
  /** The page has groups or components; false: it shows every monitor and heartbeat of its project. */
  configured: boolean;
  component: { type: 'monitor' | 'heartbeat'; id: string; display_name: string | null } | null;
}

export async function findPageComponent(sql: Sql, pageSlug: string, subjectId: string): Promise<FoundPageComponent | undefined> {
  const [row] = await sql<
    (Omit<FoundPageComponent, 'component'> & { monitor_id: string | null; heartbeat_id: string | null; display_name: string | null })[]
  >`
    select p.project_id,
      exists (select 1 from status_page_groups g where g.status_page_id = p.id)
        or exists (select 1 from status_page_components c where c.status_page_id = p.id) as configured,
      c.monitor_id, c.heartbeat_id, c.display_name
    from status_pages p
    left join status_page_components c on c.status_page_id = p.id and c.group_id is not null
      and (c.monitor_id = ${subjectId}::uuid or c.heartbeat_id = ${subjectId}::uuid)
    where p.slug = ${pageSlug}
    limit 1`;
  if (!row) return undefined;
  const id = row.monitor_id ?? row.heartbeat_id;
  return {
    project_id: row.project_id,
    configured: row.configured,
    component: id ? { type: row.monitor_id ? 'monitor' : 'heartbeat', id, display_name: row.display_name } : null,
  };
}
