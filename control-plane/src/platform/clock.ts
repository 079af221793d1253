/**
 * Time as the deadline role sees it: `now` for the heartbeat rules and the one timer of the
 * deadline heap. Production uses the system clock; a test passes a clock it advances, so a
 * 60-second grace period runs out without waiting for it.
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
