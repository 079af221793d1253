import { formatTimestamp } from '../http/time.ts';
import type { HeartbeatRecord } from './repo.ts';
import type { HeartbeatState } from './state.ts';

export const toDate = (pg: string | null): Date | null => (pg === null ? null : new Date(formatTimestamp(pg)));
export const toIso = (d: Date | null): string | null => d && d.toISOString();

/** The rules' view of a heartbeats row. */
export function stateOf(r: HeartbeatRecord): HeartbeatState {
  return {
    status: r.status,
    next_ping_at: toDate(r.next_ping_at),
    last_ping_at: toDate(r.last_ping_at),
    last_ping_kind: r.last_ping_kind,
    started_at: toDate(r.started_at),
    down_since: toDate(r.down_since),
    grace_period: r.grace_period,
    cron_schedule: r.cron_schedule,
    timezone: r.timezone,
    period: r.period,
    active: r.active,
  };
}

/**
 * A timestamp to write: the stored text when the rules left the instant as it was (Date keeps
 * milliseconds only, the column keeps microseconds), else the new instant.
 */
export function keepOrSet(stored: string | null, before: Date | null, after: Date | null): string | null {
  return before?.getTime() === after?.getTime() ? stored : toIso(after);
}

/** The columns a transition writes (the rules' state less the configuration). */
export interface StateColumns {
  status: HeartbeatRecord['status'];
  next_ping_at: string | null;
  last_ping_at: string | null;
  last_ping_kind: HeartbeatRecord['last_ping_kind'];
  started_at: string | null;
  down_since: string | null;
}

export function stateColumns(row: HeartbeatRecord, before: HeartbeatState, after: HeartbeatState): StateColumns {
  return {
    status: after.status,
    next_ping_at: keepOrSet(row.next_ping_at, before.next_ping_at, after.next_ping_at),
    last_ping_at: keepOrSet(row.last_ping_at, before.last_ping_at, after.last_ping_at),
    last_ping_kind: after.last_ping_kind,
    started_at: keepOrSet(row.started_at, before.started_at, after.started_at),
    down_since: keepOrSet(row.down_since, before.down_since, after.down_since),
  };
}

const sameInstant = (a: Date | null, b: Date | null) => a?.getTime() === b?.getTime();

/** True when a transition left every state column as it was. */
export function unchanged(before: HeartbeatState, after: HeartbeatState): boolean {
  return (
    before.status === after.status &&
    before.last_ping_kind === after.last_ping_kind &&
    sameInstant(before.next_ping_at, after.next_ping_at) &&
    sameInstant(before.last_ping_at, after.last_ping_at) &&
    sameInstant(before.started_at, after.started_at) &&
    sameInstant(before.down_since, after.down_since)
  );
}
