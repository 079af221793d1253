import { arrayLiteral, type Db } from '../../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../../platform/http/pagination.ts';
import type { IncidentImpact } from '../overall.ts';
import type { IncidentStatus } from './rules.ts';

/** A status_page_incidents row; timestamps are Postgres text. */
export interface IncidentRecord {
  id: string;
  status_page_id: string;
  title: string;
  impact: IncidentImpact;
  status: IncidentStatus;
  published_at: string | null;
  published_by: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  postmortem: string;
  postmortem_published_at: string | null;
  source_monitor_id: string | null;
  source_heartbeat_id: string | null;
  source_key: string | null;
  source_ended_at: string | null;
}

export interface UpdateRecord {
  id: string;
  incident_id: string;
  status: IncidentStatus;
  message: string;
  at: string;
  posted_by: string | null;
}

export interface IncidentComponentRecord {
  incident_id: string;
  type: 'monitor' | 'heartbeat';
  subject_id: string;
}

const columns = (db: Db) => db`
  id, status_page_id, title, impact, status, published_at, published_by, created_at, updated_at, resolved_at,
  postmortem, postmortem_published_at, source_monitor_id, source_heartbeat_id, source_key, source_ended_at`;

export async function listIncidents(
  db: Db,
  pageId: string,
  filter: { status?: 'open' | 'resolved' | undefined },
  page: PageQuery,
): Promise<{ items: IncidentRecord[]; total: number }> {
  const where = db`status_page_id = ${pageId}
    ${filter.status === 'open' ? db`and resolved_at is null` : filter.status === 'resolved' ? db`and resolved_at is not null` : db``}`;
  const [items, [count]] = await Promise.all([
    db<IncidentRecord[]>`
      select ${columns(db)} from status_page_incidents where ${where}
      order by created_at desc, id limit ${page.per_page} offset ${offsetOf(page)}`,
    db<{ n: number }[]>`select count(*)::int as n from status_page_incidents where ${where}`,
  ]);
  return { items, total: count!.n };
}

export async function findIncident(db: Db, pageId: string, id: string, forUpdate = false): Promise<IncidentRecord | undefined> {
  const [row] = await db<IncidentRecord[]>`
    select ${columns(db)} from status_page_incidents where id = ${id} and status_page_id = ${pageId}
    ${forUpdate ? db`for update` : db``}`;
  return row;
}

export interface IncidentWrite {
  title: string;
  impact: IncidentImpact;
  status: IncidentStatus;
  published_at: Date | string | null;
  published_by: string | null;
  resolved_at: Date | string | null;
  source?: { monitor_id: string | null; heartbeat_id: string | null; key: string; ended_at: string | null };
}

export async function insertIncident(tx: Db, pageId: string, w: IncidentWrite, at: Date | string): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into status_page_incidents (status_page_id, title, impact, status, published_at, published_by, resolved_at, created_at, updated_at,
      source_monitor_id, source_heartbeat_id, source_key, source_ended_at)
    values (${pageId}, ${w.title}, ${w.impact}, ${w.status}, ${w.published_at}, ${w.published_by}, ${w.resolved_at}, ${at}, ${at},
      ${w.source?.monitor_id ?? null}, ${w.source?.heartbeat_id ?? null}, ${w.source?.key ?? null}, ${w.source?.ended_at ?? null})
    returning id`;
  return row!.id;
}

/** What an edit writes of the incident itself (its status moves with updates). */
export type IncidentEdit = Pick<
  IncidentRecord,
  'title' | 'impact' | 'published_at' | 'published_by' | 'postmortem' | 'postmortem_published_at'
>;

export async function editIncident(tx: Db, id: string, e: IncidentEdit, now: Date): Promise<void> {
  await tx`
    update status_page_incidents set title = ${e.title}, impact = ${e.impact}, published_at = ${e.published_at},
      published_by = ${e.published_by}, postmortem = ${e.postmortem}, postmortem_published_at = ${e.postmortem_published_at},
      updated_at = ${now}
    where id = ${id}`;
}

/** Moves the status with an update: resolved sets resolved_at, any other status clears it. */
export async function moveStatus(tx: Db, id: string, status: IncidentStatus, at: Date | string): Promise<void> {
  await tx`
    update status_page_incidents set status = ${status},
      resolved_at = case when ${status} = 'resolved' then coalesce(resolved_at, ${at}::timestamptz) end, updated_at = greatest(updated_at, ${at}::timestamptz)
    where id = ${id}`;
}

export async function deleteIncident(db: Db, id: string): Promise<void> {
  await db`delete from status_page_incidents where id = ${id}`;
}

export async function insertUpdate(
  tx: Db,
  incidentId: string,
  u: { status: IncidentStatus; message: string; at: Date | string; posted_by: string | null },
): Promise<void> {
  await tx`
    insert into status_page_incident_updates (incident_id, status, message, at, posted_by)
    values (${incidentId}, ${u.status}, ${u.message}, ${u.at}, ${u.posted_by})`;
}

export async function countUpdates(db: Db, incidentId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from status_page_incident_updates where incident_id = ${incidentId}`;
  return row!.n;
}

/** The updates of these incidents, newest first. */
export async function updatesOf(db: Db, incidentIds: readonly string[]): Promise<UpdateRecord[]> {
  if (incidentIds.length === 0) return [];
  return db<UpdateRecord[]>`
    select id, incident_id, status, message, at, posted_by from status_page_incident_updates
    where incident_id = any(${arrayLiteral(incidentIds)}::uuid[])
    order by incident_id, at desc, id desc`;
}

export async function componentsOf(db: Db, incidentIds: readonly string[]): Promise<IncidentComponentRecord[]> {
  if (incidentIds.length === 0) return [];
  return db<IncidentComponentRecord[]>`
    select incident_id, case when monitor_id is not null then 'monitor' else 'heartbeat' end as type,
      coalesce(monitor_id, heartbeat_id) as subject_id
    from status_page_incident_components
    where incident_id = any(${arrayLiteral(incidentIds)}::uuid[])
    order by incident_id, position`;
}

export async function replaceComponents(
  tx: Db,
  incidentId: string,
  refs: readonly { type: 'monitor' | 'heartbeat'; id: string }[],
): Promise<void> {
  await tx`delete from status_page_incident_components where incident_id = ${incidentId}`;
  if (refs.length === 0) return;
  const rows = refs.map((r, position) => ({
    incident_id: incidentId,
    monitor_id: r.type === 'monitor' ? r.id : null,
    heartbeat_id: r.type === 'heartbeat' ? r.id : null,
    position,
  }));
  await tx`insert into status_page_incident_components ${tx(rows, 'incident_id', 'monitor_id', 'heartbeat_id', 'position')}`;
}

/** The heaviest impact of each page's published incidents that are not resolved (pages without any are left out). */
export async function openImpacts(db: Db, pageIds: readonly string[]): Promise<Map<string, IncidentImpact[]>> {
  const out = new Map<string, IncidentImpact[]>();
  if (pageIds.length === 0) return out;
  const rows = await db<{ status_page_id: string; impacts: IncidentImpact[] }[]>`
    select status_page_id, array_agg(distinct impact) as impacts from status_page_incidents
    where status_page_id = any(${arrayLiteral(pageIds)}::uuid[]) and resolved_at is null and published_at is not null
    group by status_page_id`;
  for (const r of rows) out.set(r.status_page_id, r.impacts);
  return out;
}

/** A page's published incidents that are ongoing, or resolved since `since`; newest first. */
export async function publishedCurrent(db: Db, pageId: string, since: Date): Promise<IncidentRecord[]> {
  return db<IncidentRecord[]>`
    select ${columns(db)} from status_page_incidents
    where status_page_id = ${pageId} and published_at is not null and (resolved_at is null or resolved_at >= ${since})
    order by created_at desc, id
    limit 200`;
}

/** A page's latest published incidents, newest first (by when they began). */
export async function publishedLatest(db: Db, pageId: string, limit: number): Promise<IncidentRecord[]> {
  return db<IncidentRecord[]>`
    select ${columns(db)} from status_page_incidents
    where status_page_id = ${pageId} and published_at is not null
    order by created_at desc, id
    limit ${limit}`;
}

/** A page's published incidents begun in [from, to), newest first. */
export async function publishedBetween(db: Db, pageId: string, from: Date, to: Date): Promise<IncidentRecord[]> {
  return db<IncidentRecord[]>`
    select ${columns(db)} from status_page_incidents
    where status_page_id = ${pageId} and published_at is not null and created_at >= ${from} and created_at < ${to}
    order by created_at desc, id
    limit 500`;
}

/** Whether a person posted an update of this incident. */
export async function personPosted(db: Db, incidentId: string): Promise<boolean> {
  const [row] = await db<{ yes: boolean }[]>`
    select exists (select 1 from status_page_incident_updates where incident_id = ${incidentId} and posted_by is not null) as yes`;
  return row!.yes;
}
