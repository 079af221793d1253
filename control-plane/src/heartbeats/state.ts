/**
 * The rules of a heartbeat as one pure function: nextState(state, input, now).
 *
 * Statuses: new (never pinged), up, late (past next_ping_at, inside grace), down, running
 * (after /start), paused (active = false). Rules the spec leaves open, decided here:
 *
 * - Watching. new/up go late once now > next_ping_at and down once now > next_ping_at + grace
 *   (both strict). A heartbeat with a next_ping_at is watched from creation, so new goes late
 *   and down too. While running, only the start timeout applies: down once
 *   now > started_at + grace.
 * - Down period. It starts with heartbeat.down (reason missed, failed or start_timeout) and ends
 *   only with a success ping, which emits heartbeat.up. Exactly one down and one up per period:
 *   a fail while down, a /start while down that then times out, a pause and resume all stay
 *   inside the same period (down_since). Config changes never end it: nothing has shown that
 *   the job works again.
 * - Notify-worthy events are heartbeat.down and heartbeat.up. late->up, new->up and
 *   running->up emit nothing; heartbeat.late is emitted on entering late and heartbeat.started
 *   on every applied /start (one run each), for dashboards and history.
 * - Pings. success -> up, next_ping_at = next cron occurrence after the ping (heartbeat's
 *   timezone), else ping + period, else null. fail -> down at once, next_ping_at moves the same
 *   way (the expected run did report). start -> running.
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

export interface HeartbeatState {
  status: HeartbeatStatus;
  next_ping_at: Date | null;
  last_ping_at: Date | null;
  last_ping_kind: PingKind | null;
  /** Set while running. */
  started_at: Date | null;
  /** Start of the open down period (it may outlive a pause or a /start), else null. */
  down_since: Date | null;
  /** Seconds. */
  grace_period: number;
  cron_schedule: string | null;
  timezone: string;
  /** Seconds; used when there is no cron schedule. */
  period: number | null;
  active: boolean;
}

export type ConfigChanges = Partial<
  Pick<HeartbeatState, 'next_ping_at' | 'cron_schedule' | 'timezone' | 'grace_period' | 'period' | 'active'>
>;

/** What happened to the heartbeat. The clock of a tick is the `now` argument. */
export type HeartbeatInput = { type: 'ping'; kind: PingKind; at: Date } | { type: 'tick' } | { type: 'config'; changes: ConfigChanges };

export type HeartbeatEventType = 'heartbeat.up' | 'heartbeat.down' | 'heartbeat.late' | 'heartbeat.started';
export type HeartbeatEventReason = 'ping' | 'missed' | 'failed' | 'start_timeout';

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
}

const addMs = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const graceMs = (state: HeartbeatState): number => state.grace_period * 1000;

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
    down_since: null,
    grace_period: heartbeat.grace_period,
    ...schedule,
    active,
  };
}

export function nextState(state: HeartbeatState, input: HeartbeatInput, now: Date): Transition {
  const events: HeartbeatEvent[] = [];
  let next: HeartbeatState;
  switch (input.type) {
    case 'ping':
      if (!isNewPing(state, input.kind, input.at)) {
        return { state, effects: { events, deadline: deadlineOf(state) } };
      }
      next = applyPing(state, input.kind, input.at, events);
      break;
    case 'config':
      next = applyConfig(state, input.changes, now);
      break;
    case 'tick':
      next = state;
      break;
  }
  next = applyClock(next, now, events);
  return { state: next, effects: { events, deadline: deadlineOf(next) } };
}

/**
 * Late and down are strict (now > boundary), so the earliest changing tick is 1 ms after the
 * boundary. Arming the boundary itself would fire a tick that changes nothing, forever.
 */
export function deadlineOf(state: HeartbeatState): Date | null {
  if (!state.active) return null;
  switch (state.status) {
    case 'running':
      return state.started_at && addMs(state.started_at, graceMs(state) + 1);
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

function applyPing(state: HeartbeatState, kind: PingKind, at: Date, events: HeartbeatEvent[]): HeartbeatState {
  const recorded: HeartbeatState = { ...state, last_ping_at: at, last_ping_kind: kind };
  if (kind !== 'start') recorded.next_ping_at = nextExpectedPing(state, at);
  if (!state.active) return recorded;

  switch (kind) {
    case 'start':
      events.push({ type: 'heartbeat.started', reason: 'ping', at });
      return { ...recorded, status: 'running', started_at: at };
    case 'success':
      if (state.down_since) events.push({ type: 'heartbeat.up', reason: 'ping', at });
      return { ...recorded, status: 'up', started_at: null, down_since: null };
    case 'fail':
      return goDown(recorded, 'failed', at, events);
  }
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

  if (!merged.active) return { ...merged, status: 'paused', started_at: null };
  if (resuming) return { ...merged, status: merged.down_since ? 'down' : baseStatus(merged) };
  return merged;
}

/** Applies the clock: late, down, start timeout, or back from late when no longer overdue. */
function applyClock(state: HeartbeatState, now: Date, events: HeartbeatEvent[]): HeartbeatState {
  if (!state.active) return state;
  switch (state.status) {
    case 'running': {
      if (!state.started_at) return state;
      const timeout = addMs(state.started_at, graceMs(state));
      return now > timeout ? goDown(state, 'start_timeout', timeout, events) : state;
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

function goDown(state: HeartbeatState, reason: 'missed' | 'failed' | 'start_timeout', at: Date, events: HeartbeatEvent[]): HeartbeatState {
  if (state.down_since === null) events.push({ type: 'heartbeat.down', reason, at });
  return { ...state, status: 'down', started_at: null, down_since: state.down_since ?? at };
}

/** The status of a watched heartbeat that is not overdue. */
function baseStatus(state: HeartbeatState): 'new' | 'up' {
  return state.last_ping_at === null ? 'new' : 'up';
}
