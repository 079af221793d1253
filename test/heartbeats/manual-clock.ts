import type { Clock } from '../../control-plane/src/platform/clock.ts';

export interface ManualClock extends Clock {
  /** Moves time forward and fires every timer that came due, earliest first. */
  advance(ms: number): void;
}

/**
 * A clock that moves only when told to. A timer armed for now or the past fires on the next
 * turn of the event loop, as a real zero-delay timer would.
 */
export function manualClock(start = Date.now()): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const fireDue = () => {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of timers) if (entry[1].at <= now && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) return;
      timers.delete(next[0]);
      next[1].fn();
    }
  };
  return {
    now: () => now,
    setTimer(fn, delayMs) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, delayMs), fn });
      if (delayMs <= 0) setImmediate(fireDue);
      return id;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      now += ms;
      fireDue();
    },
  };
}
