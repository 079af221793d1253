import type postgres from 'postgres';
import type { Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';
import type { OutputRule } from './output.ts';
import type { StoredRuns } from './record.ts';
import type { HeartbeatStatus, PingKind } from './state.ts';

/** The pool or an open transaction. */
export type Db = postgres.ISql;

/** A heartbeats row; timestamps are Postgres text (microseconds kept). */
export interface HeartbeatRecord {
  id: string;
  project_id: string;
  name: string;
  grace_period: number;
  cron_schedule: string | null;
  timezone: string;
  period: number | null;
  next_ping_at: string | null;
  active: boolean;
  status: HeartbeatStatus;
  last_ping_at: string | null;
  last_ping_kind: PingKind | null;
  started_at: string | null;
  down_since: string | null;
  runs: StoredRuns;
  last_success_at: string | null;
  failed_runs: number;
  max_duration: number | null;
  min_duration: number | null;
  too_frequent_ratio: number | null;
  alert_after_failures: number;
  success_exit_codes: number[];
  output_rules: OutputRule[];
  created_at: string;
  updated_at: string;
}

export interface HeartbeatView extends HeartbeatRecord {
  project_name: string;
  project_description: string;
  integration_ids: string[];
  depends_on: { type: 'monitor' | 'heartbeat'; id: string }[];
  snoozed_until: string | null;
}

/** What a create or an update writes; timestamps as ISO 8601 text. */
export type HeartbeatWrite = Pick<
  HeartbeatRecord,
  | 'name'
  | 'grace_period'
  | 'cron_schedule'
  | 'timezone'
  | 'period'
  | 'next_ping_at'
  | 'active'
  | 'status'
  | 'started_at'
  | 'down_since'
  | 'runs'
  | 'max_duration'
  | 'min_duration'
  | 'too_frequent_ratio'
  | 'alert_after_failures'
  | 'success_exit_codes'
  | 'output_rules'
>;

const writeColumns: (keyof HeartbeatWrite)[] = [
  'name',
  'grace_period',
  'cron_schedule',
  'timezone',
  'period',
  'next_ping_at',
  'active',
  'status',
  'started_at',
  'down_since',
  'runs',
  'max_duration',
  'min_duration',
  'too_frequent_ratio',
  'alert_after_failures',
  'success_exit_codes',
  'output_rules',
];

function viewQuery(db: Db, where: postgres.PendingQuery<postgres.Row[]>, page?: PageQuery) {
  return db<(HeartbeatView & { total: number })[]>`
    select h.*, p.name as project_name, p.description as project_description,
      coalesce((select array_agg(hi.integration_id order by hi.integration_id)
                from heartbeat_integrations hi where hi.heartbeat_id = h.id), '{}') as integration_ids,
      coalesce((select json_agg(json_build_object('type', case when d.parent_monitor_id is not null then 'monitor' else 'heartbeat' end,
                  'id', d.parent_id) order by d.position) from dependencies d where d.child_id = h.id), '[]') as depends_on
      ${page ? db`, count(*) over ()::int as total` : db``}
    from heartbeats h
    join projects p on p.id = h.project_id
    where ${where}
    order by h.created_at, h.id
    ${page ? db`limit ${page.per_page} offset ${offsetOf(page)}` : db``}`;
}

export async function listHeartbeats(
  sql: Sql,
  projectIds: readonly string[],
  page: PageQuery,
): Promise<{ views: HeartbeatView[]; total: number }> {
  const inProjects = sql`h.project_id = any(${sql.array([...projectIds])}::uuid[])`;
  const rows = await viewQuery(sql, inProjects, page);
  const total = rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from heartbeats h where ${inProjects}`)[0]!.n;
  return { views: rows, total };
}

/** A project's heartbeats (these ids, or all), oldest first, without their links. */
export async function heartbeatRecords(sql: Sql, projectId: string, ids?: readonly string[]): Promise<HeartbeatRecord[]> {
  return sql<HeartbeatRecord[]>`
    select * from heartbeats
    where project_id = ${projectId} ${ids ? sql`and id = any(${sql.array([...ids])}::uuid[])` : sql``}
    order by created_at, id`;
}

export async function findHeartbeat(sql: Sql, id: string, projectIds: readonly string[]): Promise<HeartbeatView | undefined> {
  const [row] = await viewQuery(sql, sql`h.id = ${id} and h.project_id = any(${sql.array([...projectIds])}::uuid[])`);
  return row;
}

/** The row, locked until the transaction ends, so a state change is never computed from a stale one. */
export async function lockHeartbeat(tx: Db, id: string, projectIds: readonly string[]): Promise<HeartbeatRecord | undefined> {
  const [row] = await tx<HeartbeatRecord[]>`
    select * from heartbeats where id = ${id} and project_id = any(${tx.array([...projectIds])}::uuid[])
    for update`;
  return row;
}

/** jsonb columns go as JSON (postgres.js would send an array as a Postgres array). */
function asRow<T extends Partial<HeartbeatWrite>>(db: Db, h: T): T {
  return { ...h, runs: db.json(h.runs as never), output_rules: db.json(h.output_rules as never) };
}

export async function insertHeartbeat(db: postgres.TransactionSql, h: HeartbeatWrite & { project_id: string }): Promise<string> {
  const values = db(asRow(db, h), 'project_id', ...writeColumns);
  const [row] = await db<{ id: string }[]>`insert into heartbeats ${values} returning id`;
  return row!.id;
}

export async function updateHeartbeat(db: Db, id: string, h: HeartbeatWrite): Promise<void> {
  await db`update heartbeats set ${db(asRow(db, h), ...writeColumns)}, updated_at = now() where id = ${id}`;
}

export async function deleteHeartbeat(sql: Sql, id: string, projectIds: readonly string[]): Promise<boolean> {
  const rows = await sql`
    delete from heartbeats where id = ${id} and project_id = any(${sql.array([...projectIds])}::uuid[]) returning id`;
  return rows.length > 0;
}
