import type { Clock } from '../../platform/clock.ts';

/**
 * What this process knows of a partition's pings: whether every ping published to it has been
 * delivered here (caught up), the stream's timestamp of the newest one delivered, and when the
 * server last confirmed that every ping published until then had been delivered here.
 */
export interface Backlog {
  caughtUp: boolean;
  /** Stream timestamp (ms) of the newest ping delivered; -Infinity before the first. */
  newest: number;
  /**
   * The process's instant (ms) at which the consumer's state was asked for by the last answer
   * that said caught up: every ping published before it had reached this process. -Infinity
   * before the first.
   */
  confirmed: number;
}

export const unknownBacklog: Backlog = { caughtUp: false, newest: -Infinity, confirmed: -Infinity };

/**
 * The instant up to which a partition's deadlines may be judged: the later of the newest
 * delivered ping's instant and the last confirmation that the partition was caught up, never
 * ahead of the process's clock. Pings are delivered in the stream's order, so every ping stamped
 * before the newest one is here already; and every ping published before a confirmation was
 * asked for was delivered by the time it answered. A deadline judged no later than that instant
 * cannot be answered by a ping still in the stream, even when the server is slow to deliver one
 * (ADR 0046). After an outage of the deadline role the backlog is replayed, and a miss is raised
 * only when the replayed pings themselves leave a gap wider than the heartbeat's period and grace.
 */
export function judgedUntil(backlog: Backlog, now: number): number {
  return Math.min(now, Math.max(backlog.newest, backlog.confirmed));
}

/** A ping was delivered: `pending` more of the partition's pings wait in the stream behind it. */
export function afterDelivery(backlog: Backlog, at: number, pending: number): Backlog {
  return { caughtUp: backlog.caughtUp && pending === 0, newest: Math.max(backlog.newest, at), confirmed: backlog.confirmed };
}

/** The consumer's state, asked for at `askedAt`, says the partition is caught up or not. */
export function afterCheck(backlog: Backlog, caughtUp: boolean, askedAt: number): Backlog {
  return { ...backlog, caughtUp, confirmed: caughtUp ? Math.max(backlog.confirmed, askedAt) : backlog.confirmed };
}

export interface PartitionClock extends Clock {
  readonly backlog: Backlog;
  /** A ping was delivered (its stream timestamp, and how many wait behind it). */
  delivered(at: number, pending: number): void;
  /**
   * What the consumer's state, asked for at `askedAt` (the process's clock), says: caught up, or
   * not (a backlog, or deliveries not yet seen here).
   */
  setCaughtUp(caughtUp: boolean, askedAt: number): void;
}

interface Timer {
  fn: () => void;
  /** The partition's instant it comes due at; NaN when armed before anything was known. */
  at: number;
  handle: unknown;
  done: boolean;
}

/**
 * A partition's clock for its deadline heap (timers.ts). A timer comes due when the partition's
 * instant (judgedUntil) reaches it. Caught up, that is once the process clock has reached it and
 * the server has confirmed, when asked after that, that the partition is still caught up:
 * `confirm` is called for that (the caller asks the consumer's state, then calls setCaughtUp).
 * With a backlog, a timer comes due when a delivered ping's instant reaches it, so the deadlines
 * of the replayed stretch come due in step with the replay and never ahead of it.
 */
export function createPartitionClock(base: Clock, opts: { initial?: Backlog; confirm?: () => void } = {}): PartitionClock {
  let backlog = opts.initial ?? unknownBacklog;
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
    const until = now();
    const clockNow = base.now();
    let ask = false;
    for (const t of [...waiting]) {
      if (t.handle !== undefined) continue;
      if (Number.isNaN(t.at)) {
        if (Number.isFinite(until)) wake(t);
      } else if (t.at <= until) wake(t);
      else if (!backlog.caughtUp) continue;
      else if (t.at <= clockNow) ask = true;
      else
        t.handle = base.setTimer(() => {
          t.handle = undefined;
          release();
        }, t.at - clockNow);
    }
    if (ask) opts.confirm?.();
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
    setCaughtUp(caughtUp, askedAt) {
      const next = afterCheck(backlog, caughtUp, askedAt);
      if (next.caughtUp === backlog.caughtUp && next.confirmed === backlog.confirmed) return;
      backlog = next;
      release();
    },
  };
}
