import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';

export interface WindowRecord {
  id: string;
  project_id: string;
  name: string;
  description: string;
  starts_at: Date | null;
  ends_at: Date | null;
  cron: string | null;
  duration_seconds: number | null;
  timezone: string;
  whole_project: boolean;
  monitor_ids: string[];
  heartbeat_ids: string[];
  active: boolean;
  active_until: Date | null;
  next_boundary_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type WindowWrite = Pick<
  WindowRecord,
  | 'name'
  | 'description'
  | 'starts_at'
  | 'ends_at'
  | 'cron'
  | 'duration_seconds'
  | 'timezone'
  | 'whole_project'
  | 'monitor_ids'
  | 'heartbeat_ids'
  | 'active'
>;

// Timestamps are read as Date here (the rules work on instants), not as the API's text.
const columns = (db: Db) => db`
  id, project_id, name, description, starts_at, ends_at, cron, duration_seconds, timezone,
  whole_project, monitor_ids::text[] as monitor_ids, heartbeat_ids::text[] as heartbeat_ids, active, active_until,
  next_boundary_at, created_at, updated_at`;

/** A timestamptz as the driver hands it (text, see platform/db/sql.ts) as a Date. */
const instant = (v: Date | string): Date => (v instanceof Date ? v : new Date(formatTimestamp(v)));

function parse(r: WindowRecord): WindowRecord {
  const d = (v: Date | string | null) => (v === null ? null : instant(v));
  return {
    ...r,
    starts_at: d(r.starts_at),
    ends_at: d(r.ends_at),
    active_until: d(r.active_until),
    next_boundary_at: d(r.next_boundary_at),
    created_at: instant(r.created_at),
    updated_at: instant(r.updated_at),
  };
}

export async function listWindows(sql: Sql, projectIds: readonly string[], page: PageQuery) {
  const rows = await sql<(WindowRecord & { total: number })[]>`
    select ${columns(sql)}, count(*) over ()::int as total from maintenance_windows
    where project_id = any(${arrayLiteral(projectIds)}::uuid[])
    order by created_at, id
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ??
    (
      await sql<{ n: number }[]>`
        select count(*)::int as n from maintenance_windows where project_id = any(${arrayLiteral(projectIds)}::uuid[])`
    )[0]!.n;
  return { items: rows.map(parse), total };
}

export async function findWindow(db: Db, id: string, projectIds: readonly string[], forUpdate = false): Promise<WindowRecord | undefined> {
  const [row] = await db<WindowRecord[]>`
    select ${columns(db)} from maintenance_windows where id = ${id} and project_id = any(${arrayLiteral(projectIds)}::uuid[])
    ${forUpdate ? db`for update` : db``}`;
  return row && parse(row);
}

/** Inserts a window; the boundary worker looks at it at `now`, the instant of the write. */
export async function insertWindow(db: Db, projectId: string, w: WindowWrite, now: Date): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into maintenance_windows (project_id, name, description, starts_at, ends_at, cron, duration_seconds, timezone,
      whole_project, monitor_ids, heartbeat_ids, active, next_boundary_at, created_at, updated_at)
    values (${projectId}, ${w.name}, ${w.description}, ${w.starts_at}, ${w.ends_at}, ${w.cron}, ${w.duration_seconds}, ${w.timezone},
      ${w.whole_project}, ${arrayLiteral(w.monitor_ids)}::uuid[], ${arrayLiteral(w.heartbeat_ids)}::uuid[], ${w.active}, ${now}, ${now}, ${now})
    returning id`;
  return row!.id;
}

/** Replaces a window's definition; the boundary worker looks at it again at `now` (a run in progress is kept when it still covers now). */
export async function updateWindow(db: Db, id: string, w: WindowWrite, now: Date): Promise<void> {
  await db`
    update maintenance_windows set name = ${w.name}, description = ${w.description}, starts_at = ${w.starts_at}, ends_at = ${w.ends_at},
      cron = ${w.cron}, duration_seconds = ${w.duration_seconds}, timezone = ${w.timezone}, whole_project = ${w.whole_project},
      monitor_ids = ${arrayLiteral(w.monitor_ids)}::uuid[], heartbeat_ids = ${arrayLiteral(w.heartbeat_ids)}::uuid[],
      active = ${w.active}, next_boundary_at = ${now}, updated_at = ${now}
    where id = ${id}`;
}

export async function deleteWindow(db: Db, id: string): Promise<void> {
  await db`delete from maintenance_windows where id = ${id}`;
}

/** Which of these ids are not monitors (or heartbeats) of the project. */
export async function foreignSubjects(db: Db, projectId: string, monitorIds: readonly string[], heartbeatIds: readonly string[]) {
  const [row] = await db<{ monitors: string[]; heartbeats: string[] }[]>`
    select
      array(select x::text from unnest(${arrayLiteral(monitorIds)}::uuid[]) as x
            where not exists (select 1 from monitors where id = x and project_id = ${projectId})) as monitors,
      array(select x::text from unnest(${arrayLiteral(heartbeatIds)}::uuid[]) as x
            where not exists (select 1 from heartbeats where id = x and project_id = ${projectId})) as heartbeats`;
  return row!;
}

/** Every window of these projects (the router's and the status pages' look-up; a project has a handful). */
export async function windowsOfProjects(db: Db, projectIds: readonly string[]): Promise<WindowRecord[]> {
  if (projectIds.length === 0) return [];
  const rows = await db<WindowRecord[]>`
    select ${columns(db)} from maintenance_windows where project_id = any(${arrayLiteral(projectIds)}::uuid[]) order by created_at, id`;
  return rows.map(parse);
}

/** Takes the windows whose next boundary has come, for this transaction; rows another worker holds are skipped. */
export async function claimDue(tx: Db, now: Date, limit: number): Promise<WindowRecord[]> {
  const rows = await tx<WindowRecord[]>`
    select ${columns(tx)} from maintenance_windows
    where next_boundary_at <= ${now}
    order by next_boundary_at
    limit ${limit}
    for update skip locked`;
  return rows.map(parse);
}

export async function saveBoundaryState(tx: Db, id: string, activeUntil: Date | null, next: Date | null): Promise<void> {
  await tx`update maintenance_windows set active_until = ${activeUntil}, next_boundary_at = ${next} where id = ${id}`;
}

/** The earliest boundary of any window (null: none), read by the index. */
export async function earliestBoundary(sql: Sql): Promise<Date | null> {
  const [row] = await sql<{ at: Date | null }[]>`
    select next_boundary_at as at from maintenance_windows where next_boundary_at is not null order by next_boundary_at limit 1`;
  return row?.at ? instant(row.at) : null;
}

export async function openOccurrence(tx: Db, w: WindowRecord, start: Date, end: Date): Promise<void> {
  await tx`
    insert into maintenance_occurrences (window_id, project_id, whole_project, monitor_ids, heartbeat_ids, starts_at, ends_at)
    values (${w.id}, ${w.project_id}, ${w.whole_project}, ${arrayLiteral(w.monitor_ids)}::uuid[], ${arrayLiteral(w.heartbeat_ids)}::uuid[],
      ${start}, ${end})`;
}

/** Ends the window's occurrence still running at `at` there; when the one ending at `at` started (null: none). */
export async function closeOccurrence(tx: Db, windowId: string, at: Date): Promise<Date | null> {
  await tx`update maintenance_occurrences set ends_at = greatest(starts_at, ${at}) where window_id = ${windowId} and ends_at > ${at}`;
  const [row] = await tx<{ starts_at: string }[]>`
    select starts_at from maintenance_occurrences where window_id = ${windowId} and ends_at = ${at} order by starts_at desc limit 1`;
  return row ? instant(row.starts_at) : null;
}

/**
 * After a project's windows change, its held alerts are looked at again now: the router
 * postpones those still covered and releases (or drops) the others, instead of waiting for an
 * end that may no longer be one.
 */
export async function reviewHeldAlerts(db: Db, projectId: string, now: Date): Promise<void> {
  await db`update held_alerts set release_at = ${now} where project_id = ${projectId} and status = 'held' and release_at > ${now}`;
}

/** The runs that covered a monitor or a heartbeat of the project between two instants, cut to them. */
export async function occurrencesOf(
  db: Db,
  projectId: string,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
  from: Date,
  to: Date,
): Promise<{ starts_at: Date; ends_at: Date }[]> {
  const rows = await db<{ starts_at: string; ends_at: string }[]>`
    select greatest(starts_at, ${from}) as starts_at, least(ends_at, ${to}) as ends_at from maintenance_occurrences
    where project_id = ${projectId} and ends_at > ${from} and starts_at < ${to}
      and (whole_project or ${subject.id}::uuid = any(${subject.type === 'monitor' ? db`monitor_ids` : db`heartbeat_ids`}))
    order by starts_at`;
  return rows.map((r) => ({ starts_at: instant(r.starts_at), ends_at: instant(r.ends_at) }));
}
