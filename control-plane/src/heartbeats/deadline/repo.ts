import { arrayLiteral, type Db, type Sql, type Statement } from '../../platform/db/sql.ts';
import type { HeartbeatRecord } from '../repo.ts';
import type { DeadlineRow, StateColumns } from '../record.ts';
import { isUuid } from '../../../../shared/src/uuid.ts';

/**
 * What the deadline role reads of a heartbeat it loads: what its deadline depends on, its project
 * and its partition. Only these columns: a load reads a million rows, and each column costs the
 * driver as much to decode as the row around it.
 */
export type LoadedHeartbeat = DeadlineRow & Pick<HeartbeatRecord, 'id' | 'project_id'> & { partition: number };

/** The partition of a row of `heartbeats h`, in SQL, with the count written in. */
export function partitionExpression(partitions: number): string {
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`partition count ${partitions} is not a positive integer`);
  return `(('x' || left(md5(h.id::text), 8))::bit(32)::bigint % ${partitions})::int`;
}

/**
 * Every heartbeat of these partitions, `chunk` rows at a time (a million rows at once would take
 * gigabytes of heap while they are turned into deadlines). The partition is computed by the
 * server with pingPartition's expression (shared/src/pings/partition.ts), not hashed again here.
 * The count is written into the statement, not passed as a parameter, so that an index on the
 * expression for that count (migration 0035 has the default's) serves it.
 */
export function loadPartitions(sql: Sql, partitions: number, which: readonly number[], chunk = 5_000): AsyncIterable<LoadedHeartbeat[]> {
  const partition = sql.unsafe(partitionExpression(partitions));
  return sql<LoadedHeartbeat[]>`
    select id, project_id, active, status, next_ping_at, grace_period, started_at, runs, max_duration, ${partition} as partition
    from heartbeats h
    where ${partition} = any(${arrayLiteral(which.map(String))}::int[])`.cursor(chunk);
}

/** The heartbeats of these ids that exist now, id → project id (a key that is no id has none). */
export async function heartbeatsNow(sql: Sql, ids: readonly string[]): Promise<Map<string, string>> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return new Map();
  const rows = await sql<{ id: string; project_id: string }[]>`
    select id, project_id from heartbeats where id = any(${arrayLiteral(valid)}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.project_id]));
}

/** The rows, locked until the transaction ends, in id order so two lockers never deadlock. */
export function lockHeartbeats(tx: Db, ids: readonly string[]) {
  return tx<HeartbeatRecord[]>`
    select * from heartbeats where id = any(${arrayLiteral(ids)}::uuid[]) order by id for update`;
}

/**
 * The statement that writes transitions (run with the step's other writes, see `together`);
 * updated_at stays, so the change trigger does not fire for our own writes.
 */
export function statesUpdate(tx: Db, rows: readonly (StateColumns & { id: string })[]): Statement {
  const col = <K extends Exclude<keyof StateColumns, 'runs' | 'failed_runs'> | 'id'>(k: K) => arrayLiteral(rows.map((r) => r[k]));
  // Open runs are rare: most rows write none, as null (the column keeps its '[]').
  const runs = arrayLiteral(rows.map((r) => (r.runs.length > 0 ? JSON.stringify(r.runs) : null)));
  const failed = `{${rows.map((r) => r.failed_runs).join(',')}}`;
  return tx`
    update heartbeats h set status = v.status, next_ping_at = v.next_ping_at, last_ping_at = v.last_ping_at,
      last_ping_kind = v.last_ping_kind, started_at = v.started_at, down_since = v.down_since,
      runs = coalesce(v.runs::jsonb, '[]'), last_success_at = v.last_success_at, failed_runs = v.failed_runs
    from unnest(${col('id')}::uuid[], ${col('status')}::text[], ${col('next_ping_at')}::timestamptz[],
      ${col('last_ping_at')}::timestamptz[], ${col('last_ping_kind')}::text[], ${col('started_at')}::timestamptz[],
      ${col('down_since')}::timestamptz[], ${runs}::text[], ${col('last_success_at')}::timestamptz[], ${failed}::int[])
      as v(id, status, next_ping_at, last_ping_at, last_ping_kind, started_at, down_since, runs, last_success_at, failed_runs)
    where h.id = v.id`;
}
