import { arrayLiteral, type Db, type Sql } from '../../platform/db/sql.ts';
import type { Outage } from './rules.ts';

export interface OutageRecord {
  key: string;
  started_at: string | null;
  ended_at: string | null;
}

/**
 * Records what these events tell of their outages and locks their rows until the transaction
 * ends, in key order (so two batches never wait on each other crosswise): the start and the end
 * of one outage, handled at the same moment by two processes, are handled one after the other,
 * the second seeing what the first wrote. Returns each outage as it is now.
 */
export async function recordOutages(tx: Db, outages: readonly Outage[]): Promise<Map<string, OutageRecord>> {
  const byKey = new Map<string, Outage[]>();
  for (const o of outages) byKey.set(o.key, [...(byKey.get(o.key) ?? []), o]);
  const rows = [...byKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, list]) => ({
      key,
      project_id: list[0]!.project_id,
      subject_type: list[0]!.subject.type,
      subject_id: list[0]!.subject.id,
      started_at: list.map((o) => o.started_at).find((s) => s !== null) ?? null,
      ended_at: list.map((o) => o.ended_at).find((s) => s !== null) ?? null,
    }));
  if (rows.length === 0) return new Map();
  const saved = await tx<OutageRecord[]>`
    insert into status_page_outages (key, project_id, subject_type, subject_id, started_at, ended_at)
    select r.key, r.project_id, r.subject_type, r.subject_id, r.started_at, r.ended_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      as r(key text, project_id uuid, subject_type text, subject_id uuid, started_at timestamptz, ended_at timestamptz)
    order by r.key
    on conflict (key) do update set
      started_at = coalesce(status_page_outages.started_at, excluded.started_at),
      ended_at = coalesce(status_page_outages.ended_at, excluded.ended_at)
    returning key, started_at, ended_at`;
  return new Map(saved.map((r) => [r.key, r]));
}

/** A page that shows a subject: by a component row (with its display name), or by having no groups at all. */
export interface ShowingPage {
  id: string;
  project_id: string;
  auto_publish_incidents: boolean;
  display_name: string | null;
}

/** A monitor or heartbeat of a project, as `pagesShowingEach` takes it. */
export interface ShownSubject {
  project_id: string;
  subject: { type: 'monitor' | 'heartbeat'; id: string };
}

/**
 * The pages showing each of these subjects, by `type:id`, each list in page id order: one
 * statement for a batch, so a burst of thousands of outages costs no statement per outage.
 */
export async function pagesShowingEach(db: Db, subjects: readonly ShownSubject[]): Promise<Map<string, ShowingPage[]>> {
  const out = new Map<string, ShowingPage[]>();
  if (subjects.length === 0) return out;
  const rows = await db<(ShowingPage & { subject_type: 'monitor' | 'heartbeat'; subject_id: string })[]>`
    with s as (
      select * from unnest(
        ${arrayLiteral(subjects.map((s) => s.project_id))}::uuid[],
        ${arrayLiteral(subjects.map((s) => s.subject.type))}::text[],
        ${arrayLiteral(subjects.map((s) => s.subject.id))}::uuid[]) as s(project_id, type, id)
    )
    select s.type as subject_type, s.id as subject_id, p.id, p.project_id, p.auto_publish_incidents, c.display_name
    from s join status_page_components c on c.monitor_id = s.id
      join status_pages p on p.id = c.status_page_id and p.project_id = s.project_id
    where s.type = 'monitor'
    union all
    select s.type, s.id, p.id, p.project_id, p.auto_publish_incidents, c.display_name
    from s join status_page_components c on c.heartbeat_id = s.id
      join status_pages p on p.id = c.status_page_id and p.project_id = s.project_id
    where s.type = 'heartbeat'
    union all
    select s.type, s.id, p.id, p.project_id, p.auto_publish_incidents, null
    from s join status_pages p on p.project_id = s.project_id
    where not exists (select 1 from status_page_components c where c.status_page_id = p.id)
      and not exists (select 1 from status_page_groups g where g.status_page_id = p.id)
    order by 1, 2, 3`;
  for (const r of rows) {
    const key = `${r.subject_type}:${r.subject_id}`;
    const page: ShowingPage = {
      id: r.id,
      project_id: r.project_id,
      auto_publish_incidents: r.auto_publish_incidents,
      display_name: r.display_name,
    };
    const list = out.get(key);
    if (list) list.push(page);
    else out.set(key, [page]);
  }
  return out;
}

/** Claims the one draft of an outage on a page: false when it was drafted before (even if deleted since). */
export async function claimDraft(tx: Db, pageId: string, key: string): Promise<boolean> {
  const rows = await tx`
    insert into status_page_drafted (status_page_id, outage_key) values (${pageId}, ${key})
    on conflict do nothing returning 1`;
  return rows.length > 0;
}

export async function linkDraft(tx: Db, pageId: string, key: string, incidentId: string): Promise<void> {
  await tx`update status_page_drafted set incident_id = ${incidentId} where status_page_id = ${pageId} and outage_key = ${key}`;
}

/** The page's latest incident drafted from this monitor or heartbeat, locked; undefined when none. */
export async function previousDraft(
  tx: Db,
  pageId: string,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
): Promise<
  | {
      id: string;
      ended_at: string | null;
      status: 'investigating' | 'identified' | 'monitoring' | 'resolved';
      resolved_on_its_own: boolean;
    }
  | undefined
> {
  const column = subject.type === 'monitor' ? tx`i.source_monitor_id` : tx`i.source_heartbeat_id`;
  const [row] = await tx<
    {
      id: string;
      ended_at: Date | string | null;
      status: 'investigating' | 'identified' | 'monitoring' | 'resolved';
      resolved_on_its_own: boolean;
    }[]
  >`
    select i.id, i.source_ended_at as ended_at, i.status,
      i.published_by is null
        and not exists (select 1 from status_page_incident_updates u where u.incident_id = i.id and u.posted_by is not null) as resolved_on_its_own
    from status_page_incidents i
    where i.status_page_id = ${pageId} and ${column} = ${subject.id}
    order by i.created_at desc, i.id desc limit 1
    for update of i`;
  return row && { ...row, ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString() };
}

/** Moves an incident to a new outage of its subject: the drafter acts on that outage's end next. */
export async function followOutage(tx: Db, incidentId: string, key: string): Promise<void> {
  await tx`update status_page_incidents set source_key = ${key}, source_ended_at = null where id = ${incidentId}`;
}

/** An incident drafted from an outage whose end the drafter has not acted on yet, locked. */
export interface EndingIncident {
  id: string;
  status: 'investigating' | 'identified' | 'monitoring' | 'resolved';
  published_at: string | null;
  published_by: string | null;
  person_posted: boolean;
  status_page_id: string;
  display_name: string | null;
}

export async function incidentsAwaitingEnd(tx: Db, keys: readonly string[]): Promise<(EndingIncident & { source_key: string })[]> {
  if (keys.length === 0) return [];
  return tx<(EndingIncident & { source_key: string })[]>`
    select i.id, i.status, i.published_at, i.published_by, i.status_page_id, i.source_key,
      exists (select 1 from status_page_incident_updates u where u.incident_id = i.id and u.posted_by is not null) as person_posted,
      c.display_name
    from status_page_incidents i
    left join status_page_components c on c.status_page_id = i.status_page_id
      and (c.monitor_id = i.source_monitor_id or c.heartbeat_id = i.source_heartbeat_id)
    where i.source_key = any(${arrayLiteral(keys)}::text[]) and i.source_ended_at is null
    order by i.id
    for update of i`;
}

/** Records that the drafter acted on the outage's end (once: a repeat finds nothing to do). */
export async function markEnded(tx: Db, incidentId: string, endedAt: string): Promise<boolean> {
  const rows = await tx`
    update status_page_incidents set source_ended_at = ${endedAt}
    where id = ${incidentId} and source_ended_at is null returning 1`;
  return rows.length > 0;
}

/**
 * Outages recorded before `cutoff` (longer ago than EVENTS keeps an event, so none of their downs
 * or ups can come again). An incident keeps its outage's key, so an end read later still finds it.
 */
export async function pruneOutages(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from status_page_outages where ctid = any(array(
      select ctid from status_page_outages where created_at < ${cutoff} limit ${limit}))`;
  return count;
}
