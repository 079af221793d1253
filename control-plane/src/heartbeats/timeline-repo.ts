import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import type { HeartbeatEventReason } from './state.ts';

/** A status change of a heartbeat, as its event was recorded in the outbox. */
export interface StatusChange {
  status: 'down' | 'up' | 'late';
  reason: HeartbeatEventReason;
  /** When it happened (the event's logical instant: the ping, or the deadline crossed). */
  at: string;
}

/**
 * The heartbeat's latest down, up and late transitions, newest first. They are its events in the
 * outbox (kept as long as HISTORY_RETENTION_DAYS), found by the partial index of migration 0015.
 */
export async function statusChanges(sql: Sql, heartbeatId: string, limit: number): Promise<StatusChange[]> {
  const rows = await sql<{ kind: string; reason: HeartbeatEventReason; at: string }[]>`
    select kind, payload #>> '{data,reason}' as reason, payload ->> 'occurred_at' as at
    from outbox_events
    where (payload #>> '{subject,id}') = ${heartbeatId} and kind in ('heartbeat.down', 'heartbeat.up', 'heartbeat.late')
    order by created_at desc
    limit ${limit}`;
  return rows.map((r) => ({
    status: r.kind.slice('heartbeat.'.length) as StatusChange['status'],
    reason: r.reason,
    at: formatTimestamp(r.at),
  }));
}

/**
 * The heartbeat's down and up transitions recorded since `since` (by when they were recorded), at
 * most `limit` of the newest, oldest first: what its uptime is summed from.
 */
export async function downUpChanges(
  sql: Sql,
  heartbeatId: string,
  since: Date,
  limit: number,
): Promise<{ kind: 'down' | 'up'; at: Date }[]> {
  const rows = await sql<{ kind: string; at: string }[]>`
    select kind, payload ->> 'occurred_at' as at
    from outbox_events
    where (payload #>> '{subject,id}') = ${heartbeatId} and kind in ('heartbeat.down', 'heartbeat.up') and created_at > ${since}
    order by created_at desc
    limit ${limit}`;
  return rows.reverse().map((r) => ({ kind: r.kind === 'heartbeat.down' ? 'down' : 'up', at: new Date(r.at) }));
}
