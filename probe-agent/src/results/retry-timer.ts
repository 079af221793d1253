/** One pending retry at most, after a back-off that doubles up to a ceiling. */
export type RetryTimer = {
  /** Arms a retry after the current back-off, then doubles it; nothing when one is armed. */
  later(): void;
  /** Arms a retry at once, replacing one armed, and starts the back-off over. */
  now(): void;
  /** A retry went through: the next failure waits the shortest delay again. */
  reset(): void;
  cancel(): void;
};

export function createRetryTimer(opts: { minMs: number; maxMs: number; fire: () => void }): RetryTimer {
  let timer: NodeJS.Timeout | undefined;
  let backoffMs = opts.minMs;
  const fire = () => {
    timer = undefined;
    opts.fire();
  };
  return {
    later() {
      if (timer !== undefined) return;
      timer = setTimeout(fire, backoffMs);
      backoffMs = Math.min(opts.maxMs, backoffMs * 2);
    },
    now() {
      backoffMs = opts.minMs;
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(fire, 0);
    },
    reset() {
      backoffMs = opts.minMs;
    },
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
