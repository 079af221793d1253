/**
 * The rules of a heartbeat as one pure function: nextState(state, input, now).
 *
 * Statuses: new (never pinged), up, late (past next_ping_at, inside grace), down, running
 * (after /start), paused (active = false). Rules the spec leaves open, decided here:
 *
 * - Watching. new/up go late once now > next_ping_at and down once now > next_ping_at + grace
 *   (both strict). A heartbeat with a next_ping_at is watched from creation, so new goes late
 *   and down too. While running, only the run-time limit applies: down once now > the earliest
 *   open run's start + max_duration (reason too_long), or + grace when it has no max_duration
 *   (reason start_timeout).
 * - Runs. A /start opens a run: keyed by its run id (`?rid=`) when it has one, else the one run
 *   without an id. A completion with the same id (or none) closes it and measures its duration,
 *   with no upper cap. Runs with ids overlap; at most MAX_OPEN_RUNS stay open (the oldest is
 *   forgotten). A completion that matches no open run has no duration. Going down ends every run.
 * - Judging a completion. The caller passes the kind as the ping's content makes it (exit codes,
 *   output rules: output.ts). A success is then a failure when its run was shorter than
 *   min_duration (too_short), or when it came sooner than too_frequent_ratio x the expected
 *   interval after the previous success (too_frequent).
 * - Failure tolerance. Failed runs are counted (failed_runs, reset by a success); the heartbeat
 *   goes down at the alert_after_failures-th in a row. A failed run below it reads up and moves
 *   next_ping_at like any completion. Silence is never tolerated: grace is the tolerance for a
 *   run that does not report.
 * - Down period. It starts with heartbeat.down (reason missed, failed, output, too_short,
 *   too_frequent, too_long or start_timeout) and ends
 *   only with a success ping, which emits heartbeat.up. Exactly one down and one up per period:
 *   a fail while down, a /start while down that then times out, a pause and resume all stay
 *   inside the same period (down_since). Config changes never end it: nothing has shown that
 *   the job works again.
 * - Notify-worthy events are heartbeat.down and heartbeat.up. late->up, new->up and
 *   running->up emit nothing; heartbeat.late is emitted on entering late and heartbeat.started
 *   on every applied /start (one run each), for dashboards and history.
 * - Pings. success -> up (running while other runs are open), next_ping_at = next cron
 *   occurrence after the ping (heartbeat's timezone), else ping + period, else null. fail -> down
 *   (at the alert_after_failures-th failed run in a row), next_ping_at moves the same way (the
 *   expected run did report). start -> running.
 * - Replays. Pings are applied in `at` order. A ping is applied only when its `at` is later than
 *   last_ping_at, or equal to it when a completion (success/fail) follows a /start in the same
 *   millisecond. Anything else is a replay or arrived out of order: same state, no events. (The
 *   deadline steps tell the two apart by the ping log and merge a ping that arrived out of order
 *   into the heartbeat's history: history.ts.)
 * - Paused. Raises nothing, arms nothing. Pings are recorded (last_ping_at, and a completion
 *   moves next_ping_at) but change no status. Resuming recomputes: down if a down period is open,
 *   else up (pinged before) or new; a schedule-derived next_ping_at that is missing or past is
 *   recomputed from now; then the clock is applied at once.
 * - Config. Changes apply at once. A changed cron/timezone/period recomputes next_ping_at from
 *   now (a new schedule starts afresh) unless next_ping_at is part of the same change; removing
 *   the schedule keeps the current next_ping_at as the explicit one. A late heartbeat that is no
 *   longer overdue goes back to up (or new when never pinged), silently.
 *
 * The clock is applied after every input, so the returned state is consistent with `now` and
 * the deadline, when there is one, is later than `now`.
 * Events carry the logical instant of the transition (the ping's `at`, or the deadline that was
 * crossed), not the tick time, so a replayed tick describes the same event.
 */
import { nextExpectedPing } from './schedule.ts';

export type HeartbeatStatus = 'new' | 'up' | 'late' | 'down' | 'running' | 'paused';
export type PingKind = 'success' | 'start' | 'fail';

/** A run opened by a /start with a run id, still open. */
export interface Run {
  rid: string;
  started_at: Date;
}

/** Open runs with ids kept at most; a job that starts runs it never ends cannot grow the state. */
export const MAX_OPEN_RUNS = 16;

export interface HeartbeatState {
  status: HeartbeatStatus;
  next_ping_at: Date | null;
  last_ping_at: Date | null;
  last_ping_kind: PingKind | null;
  /** Start of the open run without a run id, else null. */
  started_at: Date | null;
  /** Open runs with a run id, oldest first. */
  runs: readonly Run[];
  /** Start of the open down period (it may outlive a pause or a /start), else null. */
  down_since: Date | null;
  /** The last completion judged a success. */
  last_success_at: Date | null;
  /** Failed runs in a row since the last success. */
  failed_runs: number;
  /** Seconds. */
  grace_period: number;
  cron_schedule: string | null;
  timezone: string;
  /** Seconds; used when there is no cron schedule. */
  period: number | null;
  active: boolean;
  /** Seconds a run may take after its /start; null: the grace period. */
  max_duration: number | null;
  /** Seconds below which a successful run counts as failed (too short); null: no minimum. */
  min_duration: number | null;
  /** A success sooner than this fraction of the expected interval after the previous one fails (too frequent); null: off. */
  too_frequent_ratio: number | null;
  /** Failed runs in a row that make the heartbeat down (1: the first). */
  alert_after_failures: number;
}

/** The rules' settings (the rest of the state is what happened). */
export type HeartbeatSettings = Pick<
  HeartbeatState,
  | 'grace_period'
  | 'cron_schedule'
  | 'timezone'
  | 'period'
  | 'active'
  | 'max_duration'
  | 'min_duration'
  | 'too_frequent_ratio'
  | 'alert_after_failures'
>;

export type ConfigChanges = Partial<HeartbeatSettings & Pick<HeartbeatState, 'next_ping_at'>>;

/** Why a completion counts as failed. `failed`: a /fail or an exit code that is not a success. */
export const failureReasons = ['failed', 'output', 'too_short', 'too_frequent'] as const;
export type FailureReason = (typeof failureReasons)[number];

/**
 * A ping as the rules see it: `kind` as its content makes it (output.ts), with `reason` 'output'
 * when an output rule turned it; `rid` its run id.
 */
export interface PingInput {
  type: 'ping';
  kind: PingKind;
  at: Date;
  rid?: string | null;
  reason?: 'output' | null;
}

/** What happened to the heartbeat. The clock of a tick is the `now` argument. */
export type HeartbeatInput = PingInput | { type: 'tick' } | { type: 'config'; changes: ConfigChanges };

export type HeartbeatEventType = 'heartbeat.up' | 'heartbeat.down' | 'heartbeat.late' | 'heartbeat.started';
export type HeartbeatEventReason = 'ping' | 'missed' | 'start_timeout' | 'too_long' | FailureReason;

/** How the rules judged a ping: a completion's outcome and why it failed, and its run's duration. */
export interface PingJudgement {
  /** null for a /start. */
  outcome: 'success' | 'fail' | null;
  reason: FailureReason | null;
  /** Milliseconds since the /start of its run; null when it closed no run. */
  duration_ms: number | null;
}

/** An event to publish on EVENTS. */
export interface HeartbeatEvent {
  type: HeartbeatEventType;
  reason: HeartbeatEventReason;
  at: Date;
}

export interface Effects {
  events: HeartbeatEvent[];
  /** The earliest instant at which a tick changes the state; null when none can. */
  deadline: Date | null;
  /** For an applied ping: how it was judged. */
  judgement?: PingJudgement;
}

export interface Transition {
  state: HeartbeatState;
  effects: Effects;
}

export interface NewHeartbeat {
  grace_period: number;
  next_ping_at?: Date | null;
  cron_schedule?: string | null;
  timezone?: string | null;
  period?: number | null;
  active?: boolean;
  max_duration?: number | null;
  min_duration?: number | null;
  too_frequent_ratio?: number | null;
  alert_after_failures?: number;
}

const addMs = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const graceMs = (state: Pick<HeartbeatState, 'grace_period'>): number => state.grace_period * 1000;

/** State of a freshly created heartbeat. Apply a tick at once if next_ping_at may be past. */
export function initialState(heartbeat: NewHeartbeat, now: Date): HeartbeatState {
  const active = heartbeat.active ?? true;
  const schedule = {
    cron_schedule: heartbeat.cron_schedule ?? null,
    timezone: heartbeat.timezone || 'UTC',
    period: heartbeat.period ?? null,
  };
  return {
    status: active ? 'new' : 'paused',
    next_ping_at: heartbeat.next_ping_at ?? nextExpectedPing(schedule, now),
    last_ping_at: null,
    last_ping_kind: null,
    started_at: null,
    runs: [],
    down_since: null,
    last_success_at: null,
    failed_runs: 0,
    grace_period: heartbeat.grace_period,
    ...schedule,
    active,
    max_duration: heartbeat.max_duration ?? null,
    min_duration: heartbeat.min_duration ?? null,
    too_frequent_ratio: heartbeat.too_frequent_ratio ?? null,
    alert_after_failures: heartbeat.alert_after_failures ?? 1,
  };
}

export function nextState(state: HeartbeatState, input: HeartbeatInput, now: Date): Transition {
  const events: HeartbeatEvent[] = [];
  let next: HeartbeatState;
  let judgement: PingJudgement | undefined;
  switch (input.type) {
    case 'ping':
      if (!isNewPing(state, input.kind, input.at)) {
        return { state, effects: { events, deadline: deadlineOf(state) } };
      }
      ({ state: next, judgement } = applyPing(state, input, events));
      break;
    case 'config':
      next = applyConfig(state, input.changes, now);
      break;
    case 'tick':
      next = state;
      break;
  }
  next = applyClock(next, now, events);
  const effects: Effects = { events, deadline: deadlineOf(next) };
  if (judgement) effects.judgement = judgement;
  return { state: next, effects };
}

/** The start of the earliest open run, or null when none is open. */
export function earliestRun(state: Pick<HeartbeatState, 'started_at' | 'runs'>): Date | null {
  let first = state.started_at;
  for (const run of state.runs) if (first === null || run.started_at < first) first = run.started_at;
  return first;
}

const runLimitMs = (state: Pick<HeartbeatState, 'max_duration' | 'grace_period'>): number =>
  (state.max_duration ?? state.grace_period) * 1000;

/**
 * The interval the schedule expects between two runs around `at`: the period, or the gap between
 * the two cron occurrences after it; null when it has neither.
 */
export function expectedInterval(state: HeartbeatState, at: Date): number | null {
  if (state.cron_schedule) {
    const first = nextExpectedPing(state, at);
    const second = first && nextExpectedPing(state, first);
    return first && second ? second.getTime() - first.getTime() : null;
  }
  return state.period === null ? null : state.period * 1000;
}

/** What a heartbeat's deadline depends on: all a partition load reads of each heartbeat. */
export type DeadlineInputs = Pick<
  HeartbeatState,
  'active' | 'status' | 'next_ping_at' | 'grace_period' | 'started_at' | 'runs' | 'max_duration'
>;

/**
 * Late and down are strict (now > boundary), so the earliest changing tick is 1 ms after the
 * boundary. Arming the boundary itself would fire a tick that changes nothing, forever.
 */
export function deadlineOf(state: DeadlineInputs): Date | null {
  if (!state.active) return null;
  switch (state.status) {
    case 'running': {
      const first = earliestRun(state);
      return first && addMs(first, runLimitMs(state) + 1);
    }
    case 'new':
    case 'up':
      return state.next_ping_at && addMs(state.next_ping_at, 1);
    case 'late':
      return state.next_ping_at && addMs(state.next_ping_at, graceMs(state) + 1);
    default:
      return null;
  }
}

/** Whether a ping comes after everything applied so far; else the rules ignore it (see Replays). */
export function isNewPing(state: HeartbeatState, kind: PingKind, at: Date): boolean {
  if (state.last_ping_at === null) return true;
  const diff = at.getTime() - state.last_ping_at.getTime();
  if (diff !== 0) return diff > 0;
  return state.last_ping_kind === 'start' && kind !== 'start';
}

function applyPing(state: HeartbeatState, ping: PingInput, events: HeartbeatEvent[]): { state: HeartbeatState; judgement: PingJudgement } {
  const { kind, at } = ping;
  const rid = ping.rid ?? null;
  const recorded: HeartbeatState = { ...state, last_ping_at: at, last_ping_kind: kind };
  if (kind === 'start') {
    const judgement: PingJudgement = { outcome: null, reason: null, duration_ms: null };
    if (!state.active) return { state: recorded, judgement };
    events.push({ type: 'heartbeat.started', reason: 'ping', at });
    const opened: HeartbeatState =
      rid === null
        ? { ...recorded, started_at: at }
        : { ...recorded, runs: [...state.runs.filter((r) => r.rid !== rid), { rid, started_at: at }].slice(-MAX_OPEN_RUNS) };
    return { state: { ...opened, status: 'running' }, judgement };
  }

  // A completion closes its run (the one with its id, or the one without) and measures it.
  const run = rid === null ? state.started_at : (state.runs.find((r) => r.rid === rid)?.started_at ?? null);
  const duration = run === null ? null : at.getTime() - run.getTime();
  const closed: HeartbeatState = {
    ...recorded,
    next_ping_at: nextExpectedPing(state, at),
    started_at: rid === null ? null : state.started_at,
    runs: rid === null ? state.runs : state.runs.filter((r) => r.rid !== rid),
  };
  let reason: FailureReason | null = kind === 'fail' ? (ping.reason ?? 'failed') : null;
  if (kind === 'success') reason = successFailure(state, at, duration);
  const judgement: PingJudgement = { outcome: reason === null ? 'success' : 'fail', reason, duration_ms: duration };
  if (reason === null) {
    const succeeded = { ...closed, last_success_at: at, failed_runs: 0 };
    if (!state.active) return { state: succeeded, judgement };
    if (state.down_since) events.push({ type: 'heartbeat.up', reason: 'ping', at });
    return { state: { ...succeeded, status: earliestRun(closed) ? 'running' : 'up', down_since: null }, judgement };
  }
  const failed = { ...closed, failed_runs: state.failed_runs + 1 };
  if (!state.active) return { state: failed, judgement };
  if (failed.failed_runs >= state.alert_after_failures || state.down_since) return { state: goDown(failed, reason, at, events), judgement };
  // Tolerated: the run did report, so the heartbeat is watched as after any completion.
  return { state: { ...failed, status: earliestRun(closed) ? 'running' : baseStatus(failed) }, judgement };
}

/** Why a completion its content made a success counts as failed, or null when it does not. */
function successFailure(state: HeartbeatState, at: Date, duration: number | null): FailureReason | null {
  if (state.min_duration !== null && duration !== null && duration < state.min_duration * 1000) return 'too_short';
  if (state.too_frequent_ratio !== null && state.last_success_at !== null) {
    const interval = expectedInterval(state, state.last_success_at);
    if (interval !== null && at.getTime() - state.last_success_at.getTime() < state.too_frequent_ratio * interval) return 'too_frequent';
  }
  return null;
}

function applyConfig(state: HeartbeatState, changes: ConfigChanges, now: Date): HeartbeatState {
  // undefined means "not part of this change"; null clears.
  const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  const merged: HeartbeatState = { ...state, ...(given as ConfigChanges) };

  const scheduleChanged =
    merged.cron_schedule !== state.cron_schedule ||
    merged.period !== state.period ||
    (merged.cron_schedule !== null && merged.timezone !== state.timezone);
  const resuming = merged.active && !state.active;
  const stale = merged.next_ping_at === null || merged.next_ping_at.getTime() <= now.getTime();
  if (changes.next_ping_at === undefined && (scheduleChanged || (resuming && stale))) {
    // With no schedule left, keep the current next_ping_at: it is now the explicit one.
    merged.next_ping_at = nextExpectedPing(merged, now) ?? merged.next_ping_at;
  }

  if (!merged.active) return { ...merged, status: 'paused', started_at: null, runs: [] };
  if (resuming) return { ...merged, status: merged.down_since ? 'down' : baseStatus(merged) };
  return merged;
}

/** Applies the clock: late, down, start timeout, or back from late when no longer overdue. */
function applyClock(state: HeartbeatState, now: Date, events: HeartbeatEvent[]): HeartbeatState {
  if (!state.active) return state;
  switch (state.status) {
    case 'running': {
      const first = earliestRun(state);
      if (!first) return state;
      const timeout = addMs(first, runLimitMs(state));
      return now > timeout ? goDown(state, state.max_duration === null ? 'start_timeout' : 'too_long', timeout, events) : state;
    }
    case 'new':
    case 'up':
    case 'late': {
      const due = state.next_ping_at;
      if (due && now > addMs(due, graceMs(state))) {
        return goDown(state, 'missed', addMs(due, graceMs(state)), events);
      }
      if (due && now > due) {
        if (state.status === 'late') return state;
        events.push({ type: 'heartbeat.late', reason: 'missed', at: due });
        return { ...state, status: 'late' };
      }
      return state.status === 'late' ? { ...state, status: baseStatus(state) } : state;
    }
    default:
      return state;
  }
}

function goDown(state: HeartbeatState, reason: Exclude<HeartbeatEventReason, 'ping'>, at: Date, events: HeartbeatEvent[]): HeartbeatState {
  if (state.down_since === null) events.push({ type: 'heartbeat.down', reason, at });
  return { ...state, status: 'down', started_at: null, runs: [], down_since: state.down_since ?? at };
}

/** The status of a watched heartbeat that is not overdue. */
function baseStatus(state: HeartbeatState): 'new' | 'up' {
  return state.last_ping_at === null ? 'new' : 'up';
}
