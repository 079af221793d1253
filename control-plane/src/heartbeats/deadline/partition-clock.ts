import type { Clock } from '../../platform/clock.ts';

/**
 * What this process knows of a partition's pings: whether every ping published to it has been
 * delivered here (caught up), and the stream's timestamp of the newest one delivered.
 */
export interface Backlog {
  caughtUp: boolean;
  /** Stream timestamp (ms) of the newest ping delivered; -Infinity before the first. */
  newest: number;
}

export const unknownBacklog: Backlog = { caughtUp: false, newest: -Infinity };

/**
 * The instant up to which a partition's deadlines may be judged: the process's clock while the
 * partition is caught up, else the newest delivered ping's instant (never ahead of the clock).
 * Pings are delivered in the stream's order, so every ping stamped before that instant is here
 * already: a deadline judged no later than it cannot be answered by a ping still in the stream.
 * After an outage of the deadline role the backlog is replayed, and a miss is raised only when
 * the replayed pings themselves leave a gap wider than the heartbeat's period and grace.
 */
export function judgedUntil(backlog: Backlog, now: number): number {
  return backlog.caughtUp ? now : Math.min(now, backlog.newest);
}

/** A ping was delivered: `pending` more of the partition's pings wait in the stream behind it. */
export function afterDelivery(backlog: Backlog, at: number, pending: number): Backlog {
  return { caughtUp: backlog.caughtUp && pending === 0, newest: Math.max(backlog.newest, at) };
}

export interface PartitionClock extends Clock {
  readonly backlog: Backlog;
  /** A ping was delivered (its stream timestamp, and how many wait behind it). */
  delivered(at: number, pending: number): void;
  /** What the consumer's state says: caught up, or not (a backlog, or deliveries not yet seen here). */
  setCaughtUp(caughtUp: boolean): void;
}

interface Timer {
  fn: () => void;
  /** The partition's instant it comes due at; NaN when armed before anything was known. */
  at: number;
  handle: unknown;
  done: boolean;
}

/**
 * A partition's clock for its deadline heap (timers.ts). Caught up, timers run on the process
 * clock; with a backlog, a timer comes due when a delivered ping's instant reaches it, so the
 * deadlines of the replayed stretch come due in step with the replay and never ahead of it.
 */
export function createPartitionClock(base: Clock, initial: Backlog = unknownBacklog): PartitionClock {
  let backlog = initial;
  const waiting = new Set<Timer>();

  const now = () => judgedUntil(backlog, base.now());

  const fire = (t: Timer) => {
    if (t.done) return;
    t.done = true;
    waiting.delete(t);
    if (t.handle !== undefined) base.clearTimer(t.handle);
    t.handle = undefined;
    t.fn();
  };
  const onProcessClock = (t: Timer) => {
    t.handle = base.setTimer(
      () => {
        t.handle = undefined;
        fire(t);
      },
      Math.max(0, t.at - base.now()),
    );
  };
  const wake = (t: Timer) => {
    t.handle = base.setTimer(() => {
      t.handle = undefined;
      fire(t);
    }, 0);
  };
  // A timer that fires early does no harm: the heap asks now() again, pops only what is due by
  // the partition's instant and arms anew. One armed before anything was known (no instant to
  // wait for) is woken at the first news.
  const release = () => {
    for (const t of [...waiting]) {
      if (t.handle !== undefined) continue;
      if (Number.isNaN(t.at)) {
        if (backlog.caughtUp || Number.isFinite(backlog.newest)) wake(t);
      } else if (backlog.caughtUp) onProcessClock(t);
      else if (backlog.newest >= t.at) wake(t);
    }
  };

  return {
    get backlog() {
      return backlog;
    },
    now,
    setTimer(fn, delayMs) {
      const from = now();
      const t: Timer = { fn, at: Number.isFinite(from) ? from + Math.max(0, delayMs) : NaN, handle: undefined, done: false };
      waiting.add(t);
      release();
      return t;
    },
    clearTimer(handle) {
      const t = handle as Timer;
      t.done = true;
      waiting.delete(t);
      if (t.handle !== undefined) base.clearTimer(t.handle);
      t.handle = undefined;
    },
    delivered(at, pending) {
      const next = afterDelivery(backlog, at, pending);
      if (next.caughtUp === backlog.caughtUp && next.newest === backlog.newest) return;
      backlog = next;
      release();
    },
    setCaughtUp(caughtUp) {
      if (caughtUp === backlog.caughtUp) return;
      backlog = { ...backlog, caughtUp };
      release();
    },
  };
}
