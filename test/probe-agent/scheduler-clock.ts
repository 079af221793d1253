import assert from 'node:assert/strict';
import { createScheduler, type SchedulerOptions } from '../../probe-agent/src/schedule/scheduler.ts';

type Pending = { at: number; fn: () => void; seq: number };

/**
 * Time only moves when the test says so. Scheduler timers and the test's own "work takes this
 * long" waits are kept apart, so the number of armed scheduler timers can be asserted.
 */
export function fakeClock(start = 0) {
  let t = start;
  let seq = 0;
  const timers = new Map<number, Pending>();
  const work = new Set<Pending>();
  let maxArmed = 0;
  let armedCount = 0;
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

  return {
    now: () => t,
    setTimer(fn: () => void, delayMs: number): number {
      assert.ok(delayMs >= 0, `negative delay ${delayMs}`);
      const id = ++seq;
      timers.set(id, { at: t + delayMs, fn, seq: id });
      armedCount++;
      maxArmed = Math.max(maxArmed, timers.size);
      return id;
    },
    clearTimer(id: number): void {
      timers.delete(id);
    },
    /** A promise resolved after ms of fake time. */
    sleep(ms: number): Promise<void> {
      return new Promise((resolve) => work.add({ at: t + ms, fn: resolve, seq: ++seq }));
    },
    get armed() {
      return timers.size;
    },
    get maxArmed() {
      return maxArmed;
    },
    get armedCount() {
      return armedCount;
    },
    /** Fires everything due up to target in time order, letting promises settle in between. */
    async advanceTo(target: number): Promise<void> {
      await flush();
      for (;;) {
        let next: Pending | undefined;
        let timerId: number | undefined;
        for (const [id, p] of timers)
          if (p.at <= target && (!next || p.at < next.at || (p.at === next.at && p.seq < next.seq))) {
            next = p;
            timerId = id;
          }
        for (const p of work)
          if (p.at <= target && (!next || p.at < next.at || (p.at === next.at && p.seq < next.seq))) {
            next = p;
            timerId = undefined;
          }
        if (!next) break;
        if (timerId !== undefined) timers.delete(timerId);
        else work.delete(next);
        t = Math.max(t, next.at);
        next.fn();
        await flush();
      }
      t = Math.max(t, target);
    },
    async advance(ms: number): Promise<void> {
      await this.advanceTo(t + ms);
    },
    /** The process was frozen: time passes without any timer firing, then timers catch up. */
    async freeze(ms: number): Promise<void> {
      t += ms;
      await this.advanceTo(t);
    },
  };
}

export type Clock = ReturnType<typeof fakeClock>;

/** stop() waits for runs in flight, and their work only finishes when fake time moves. */
export async function shutdown(scheduler: { stop(): Promise<void> }, clock: Clock): Promise<void> {
  const stopped = scheduler.stop();
  await clock.advance(60_000);
  await stopped;
}
export type Started = { id: string; scheduledAt: number; startedAt: number; offGrid: boolean };

export function setup(clock: Clock, extra: Partial<SchedulerOptions<number>> & { workMs?: number } = {}) {
  const started: Started[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const scheduler = createScheduler<number>({
    now: clock.now,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
    concurrency: 1000,
    run: async (id, scheduledAt, offGrid) => {
      started.push({ id, scheduledAt, startedAt: clock.now(), offGrid });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await clock.sleep(extra.workMs ?? 0);
      inFlight--;
    },
    ...extra,
  });
  return { scheduler, started, maxInFlight: () => maxInFlight };
}
