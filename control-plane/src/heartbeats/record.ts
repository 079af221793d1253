import { formatTimestamp } from '../platform/http/time.ts';
import type { HeartbeatRecord } from './repo.ts';
import type { OutputRule } from './output.ts';
import type { DeadlineInputs, HeartbeatState, Run } from './state.ts';

/** The number the `n` decimal digits of `s` at `from` spell, or NaN. */
function digitsAt(s: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return v;
}

/**
 * A stored timestamp as a Date (milliseconds kept, as Date does). The deadline steps read five of
 * them per heartbeat: Postgres's own form, `2026-11-21 01:25:30.1234+00`, is read digit by digit;
 * anything else goes through formatTimestamp.
 */
export function toDate(pg: string | null): Date | null {
  if (pg === null) return null;
  const end = pg.length - 3;
  if (end >= 19 && pg.charCodeAt(10) === 32 && pg.endsWith('+00') && (end === 19 || (pg.charCodeAt(19) === 46 && end > 20 && end <= 26))) {
    const fraction = end === 19 ? 0 : Math.min(3, end - 20);
    const ms = fraction === 0 ? 0 : digitsAt(pg, 20, fraction) * 10 ** (3 - fraction);
    const t = Date.UTC(
      digitsAt(pg, 0, 4),
      digitsAt(pg, 5, 2) - 1,
      digitsAt(pg, 8, 2),
      digitsAt(pg, 11, 2),
      digitsAt(pg, 14, 2),
      digitsAt(pg, 17, 2),
      ms,
    );
    if (!Number.isNaN(t) && pg.charCodeAt(4) === 45 && pg.charCodeAt(7) === 45 && pg.charCodeAt(13) === 58 && pg.charCodeAt(16) === 58)
      return new Date(t);
  }
  return new Date(formatTimestamp(pg));
}
export const toIso = (d: Date | null): string | null => d && d.toISOString();

/** Open runs as stored (jsonb: `[{rid, started_at}]`, instants as ISO text). */
export type StoredRuns = { rid: string; started_at: string }[];

const NO_RUNS: readonly Run[] = Object.freeze([]);

export function runsOf(stored: StoredRuns | null | undefined): readonly Run[] {
  if (!stored || stored.length === 0) return NO_RUNS;
  return stored.map((r) => ({ rid: r.rid, started_at: new Date(r.started_at) }));
}

export function storedRuns(runs: readonly Run[]): StoredRuns {
  return runs.map((r) => ({ rid: r.rid, started_at: r.started_at.toISOString() }));
}

/** The columns of a heartbeats row the rules read. */
export type StateRow = Pick<
  HeartbeatRecord,
  | 'status'
  | 'next_ping_at'
  | 'last_ping_at'
  | 'last_ping_kind'
  | 'started_at'
  | 'down_since'
  | 'grace_period'
  | 'cron_schedule'
  | 'timezone'
  | 'period'
  | 'active'
  | 'runs'
  | 'last_success_at'
  | 'failed_runs'
  | 'max_duration'
  | 'min_duration'
  | 'too_frequent_ratio'
  | 'alert_after_failures'
>;

/** The rules' view of a heartbeats row. */
/** The columns a heartbeat's deadline is computed from (deadlineInputsOf). */
export type DeadlineRow = Pick<StateRow, 'active' | 'status' | 'next_ping_at' | 'grace_period' | 'started_at' | 'runs' | 'max_duration'>;

/** What deadlineOf reads, from those columns only: a partition load reads them for a million heartbeats. */
export function deadlineInputsOf(r: DeadlineRow): DeadlineInputs {
  return {
    active: r.active,
    status: r.status,
    next_ping_at: toDate(r.next_ping_at),
    grace_period: r.grace_period,
    started_at: toDate(r.started_at),
    runs: runsOf(r.runs),
    max_duration: r.max_duration,
  };
}

export function stateOf(r: StateRow): HeartbeatState {
  return {
    status: r.status,
    next_ping_at: toDate(r.next_ping_at),
    last_ping_at: toDate(r.last_ping_at),
    last_ping_kind: r.last_ping_kind,
    started_at: toDate(r.started_at),
    runs: runsOf(r.runs),
    down_since: toDate(r.down_since),
    last_success_at: toDate(r.last_success_at),
    failed_runs: r.failed_runs,
    grace_period: r.grace_period,
    cron_schedule: r.cron_schedule,
    timezone: r.timezone,
    period: r.period,
    active: r.active,
    max_duration: r.max_duration,
    min_duration: r.min_duration,
    too_frequent_ratio: r.too_frequent_ratio,
    alert_after_failures: r.alert_after_failures,
  };
}

/** The content rules' settings of a heartbeats row (output.ts). */
export function contentSettingsOf(r: Pick<HeartbeatRecord, 'success_exit_codes' | 'output_rules'>): {
  success_exit_codes: readonly number[];
  output_rules: readonly OutputRule[];
} {
  return { success_exit_codes: r.success_exit_codes, output_rules: r.output_rules };
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
  runs: StoredRuns;
  last_success_at: string | null;
  failed_runs: number;
}

export function stateColumns(row: HeartbeatRecord, before: HeartbeatState, after: HeartbeatState): StateColumns {
  return {
    status: after.status,
    next_ping_at: keepOrSet(row.next_ping_at, before.next_ping_at, after.next_ping_at),
    last_ping_at: keepOrSet(row.last_ping_at, before.last_ping_at, after.last_ping_at),
    last_ping_kind: after.last_ping_kind,
    started_at: keepOrSet(row.started_at, before.started_at, after.started_at),
    down_since: keepOrSet(row.down_since, before.down_since, after.down_since),
    runs: before.runs === after.runs ? row.runs : storedRuns(after.runs),
    last_success_at: keepOrSet(row.last_success_at, before.last_success_at, after.last_success_at),
    failed_runs: after.failed_runs,
  };
}

const sameRuns = (a: readonly Run[], b: readonly Run[]) =>
  a === b || (a.length === b.length && a.every((r, i) => r.rid === b[i]!.rid && r.started_at.getTime() === b[i]!.started_at.getTime()));

const sameInstant = (a: Date | null, b: Date | null) => a?.getTime() === b?.getTime();

/** True when a transition left every state column as it was. */
export function unchanged(before: HeartbeatState, after: HeartbeatState): boolean {
  return (
    before.status === after.status &&
    before.last_ping_kind === after.last_ping_kind &&
    sameInstant(before.next_ping_at, after.next_ping_at) &&
    sameInstant(before.last_ping_at, after.last_ping_at) &&
    sameInstant(before.started_at, after.started_at) &&
    sameInstant(before.down_since, after.down_since) &&
    sameRuns(before.runs, after.runs) &&
    sameInstant(before.last_success_at, after.last_success_at) &&
    before.failed_runs === after.failed_runs
  );
}
