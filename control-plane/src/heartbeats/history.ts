/**
 * Pings that reach the rules late: logged for the first time, but earlier (by the stream's
 * timestamp) than pings already applied. JetStream delivers a partition's pings in order except
 * when a delivery is lost (its process died, or the consumer's leader changed while it was in
 * flight): the ping comes again after the ack wait, by which time later pings of the same
 * heartbeat may have been applied. The ping was acknowledged to the job, so what it says must
 * count: ignoring a late /fail between two successes would miss a down period.
 *
 * The log keeps, with each ping, the rules' state right after it. A late ping is merged by
 * replaying the heartbeat's pings from the state after the ping before it twice, without and with
 * the late one (a tick at each ping's instant, so misses in between happen as they did). What
 * the first replay raised was raised already; the alerts only the second one raises are owed now.
 * Alerts are counted by down periods: a late /fail that opens a period of its own owes its
 * heartbeat.down and the heartbeat.up of the success that ended it; a late success that splits a
 * period owes an up and the down of the period after it; a late ping that only moves where a
 * period starts or ends owes nothing (its alert went out, at the later instant).
 */
import { runsOf, unchanged, type StoredRuns } from './record.ts';
import { nextState, type HeartbeatEvent, type HeartbeatState, type PingJudgement, type PingKind } from './state.ts';

/** The state a ping left, and how the rules judged it, as the log stores them. */
export interface PingSnapshot {
  id: string;
  after: Snapshot;
  judgement: PingJudgement | null;
}

/** The rules' state after a ping, less the configuration (which is the heartbeat's current one). */
export type Snapshot = Pick<
  HeartbeatState,
  'status' | 'next_ping_at' | 'last_ping_at' | 'last_ping_kind' | 'started_at' | 'runs' | 'down_since' | 'last_success_at' | 'failed_runs'
>;

export interface LoggedPing {
  /** The ping's id. */
  id: string;
  /** As its content makes it (output.ts). */
  kind: PingKind;
  /** The stream's timestamp. */
  at: Date;
  rid?: string | null;
  /** 'output' when an output rule turned its kind. */
  reason?: 'output' | null;
  /** The state right after it; null when not known (logged before snapshots were kept). */
  after: Snapshot | null;
}

export interface LateMerge {
  /** The state to store. */
  state: HeartbeatState;
  /** Alerts owed now, in the order they happened. */
  events: HeartbeatEvent[];
  /** The state after the late ping and after each later one, as the merged history has them. */
  snapshots: PingSnapshot[];
}

export function snapshotOf(s: HeartbeatState): Snapshot {
  return {
    status: s.status,
    next_ping_at: s.next_ping_at,
    last_ping_at: s.last_ping_at,
    last_ping_kind: s.last_ping_kind,
    started_at: s.started_at,
    runs: s.runs,
    down_since: s.down_since,
    last_success_at: s.last_success_at,
    failed_runs: s.failed_runs,
  };
}

const date = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null);

/**
 * A snapshot as stored (jsonb: instants as ISO strings). One logged before the run rules has no
 * runs, last success or failed runs: none open, the last success unknown, none failed.
 */
export function parseSnapshot(v: unknown): Snapshot | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  return {
    status: o.status as Snapshot['status'],
    next_ping_at: date(o.next_ping_at),
    last_ping_at: date(o.last_ping_at),
    last_ping_kind: (o.last_ping_kind ?? null) as Snapshot['last_ping_kind'],
    started_at: date(o.started_at),
    runs: runsOf(Array.isArray(o.runs) ? (o.runs as StoredRuns) : null),
    down_since: date(o.down_since),
    last_success_at: date(o.last_success_at),
    failed_runs: typeof o.failed_runs === 'number' ? o.failed_runs : 0,
  };
}

/** Pings in the rules' order: by instant, a /start before a completion of the same millisecond. */
export function comparePings(a: Pick<LoggedPing, 'kind' | 'at'>, b: Pick<LoggedPing, 'kind' | 'at'>): number {
  const d = a.at.getTime() - b.at.getTime();
  if (d !== 0) return d;
  return (a.kind === 'start' ? 0 : 1) - (b.kind === 'start' ? 0 : 1);
}

interface Replay {
  final: HeartbeatState;
  alerts: HeartbeatEvent[];
  snapshots: PingSnapshot[];
}

const isAlert = (e: HeartbeatEvent) => e.type === 'heartbeat.down' || e.type === 'heartbeat.up';

function replay(from: HeartbeatState, pings: readonly Omit<LoggedPing, 'after'>[], now: Date): Replay {
  let state = from;
  const alerts: HeartbeatEvent[] = [];
  const snapshots: Replay['snapshots'] = [];
  const step = (input: Parameters<typeof nextState>[1], at: Date) => {
    const t = nextState(state, input, at);
    state = t.state;
    alerts.push(...t.effects.events.filter(isAlert));
    return t.effects.judgement ?? null;
  };
  for (const p of pings) {
    step({ type: 'tick' }, p.at);
    const judgement = step({ type: 'ping', kind: p.kind, at: p.at, rid: p.rid ?? null, reason: p.reason ?? null }, p.at);
    snapshots.push({ id: p.id, after: snapshotOf(state), judgement });
  }
  step({ type: 'tick' }, now);
  return { final: state, alerts, snapshots };
}

/**
 * Merges a late ping into the heartbeat's history. `log` holds the heartbeat's other logged pings
 * in `comparePings` order. Null when the log has no state from before the ping to replay from.
 */
export function mergeLatePing(
  current: HeartbeatState,
  log: readonly LoggedPing[],
  late: Omit<LoggedPing, 'after'>,
  now: Date,
): LateMerge | null {
  const i = log.findIndex((p) => comparePings(late, p) < 0);
  const before = i === -1 ? log.length : i;
  const prev = log[before - 1];
  if (!prev?.after) return null;
  const later = log.slice(before);
  const from: HeartbeatState = { ...current, ...prev.after };
  const without = replay(from, later, now);
  const withLate = replay(from, [late, ...later], now);

  const owed = owedAlerts(without.alerts, withLate.alerts);
  // What a tick now does to the stored state happens whatever the late ping says (both replays
  // have it too, so it is not counted as owed).
  const clocked = nextState(current, { type: 'tick' }, now);
  // Replaying without the late ping must arrive where the heartbeat is; if it does not (its
  // configuration changed in between), the stored state stays, and only alerts that leave it as
  // it is (a down and its up) are owed.
  const agrees = unchanged(without.final, clocked.state);
  const balanced = owed.filter((e) => e.type === 'heartbeat.down').length === owed.filter((e) => e.type === 'heartbeat.up').length;
  const events = [...(agrees || balanced ? owed : []), ...clocked.effects.events];
  return { state: agrees ? withLate.final : clocked.state, events, snapshots: withLate.snapshots };
}

/** The alerts of `after` beyond those of `before`, counted by type; the unmatched ones, in order. */
function owedAlerts(before: readonly HeartbeatEvent[], after: readonly HeartbeatEvent[]): HeartbeatEvent[] {
  const count = (es: readonly HeartbeatEvent[], type: string) => es.filter((e) => e.type === type).length;
  const extra = {
    'heartbeat.down': count(after, 'heartbeat.down') - count(before, 'heartbeat.down'),
    'heartbeat.up': count(after, 'heartbeat.up') - count(before, 'heartbeat.up'),
  } as Record<string, number>;
  if (extra['heartbeat.down']! <= 0 && extra['heartbeat.up']! <= 0) return [];
  const raised = new Map<string, number>();
  const key = (e: HeartbeatEvent) => `${e.type}@${e.at.getTime()}`;
  for (const e of before) raised.set(key(e), (raised.get(key(e)) ?? 0) + 1);
  const owed: HeartbeatEvent[] = [];
  for (const e of after) {
    const k = key(e);
    const n = raised.get(k) ?? 0;
    if (n > 0) {
      raised.set(k, n - 1);
      continue;
    }
    if (extra[e.type]! > 0) {
      extra[e.type]!--;
      owed.push(e);
    }
  }
  return owed;
}
