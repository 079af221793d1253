/**
 * Time as the roles of a process see it: `now` for every rule (heartbeat and monitor states,
 * retention cutoffs, token use, rate limits) and the one timer of the deadline heap.
 * startControlPlane takes one clock and hands it to every role. Production uses the system
 * clock; a test passes a clock it advances, so a 60-second grace period runs out without waiting
 * for it. Mechanisms that pace work rather than judge it (leases, batching, retries, pulls) run
 * on real time.
 */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, delayMs) => setTimeout(fn, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The clock's instant as a Date, for what takes `now: () => Date`. */
export const dateNow = (clock: Pick<Clock, 'now'>) => (): Date => new Date(clock.now());
