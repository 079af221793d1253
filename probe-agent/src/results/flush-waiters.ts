/** Callers of flush(), answered together when the buffer empties or the publisher closes. */
export type FlushWaiters = {
  /** Resolves with what settle() says, or false after timeoutMs. */
  wait(timeoutMs: number): Promise<boolean>;
  settle(done: boolean): void;
};

export function createFlushWaiters(): FlushWaiters {
  let waiters: Array<(done: boolean) => void> = [];
  return {
    wait(timeoutMs) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== done);
          resolve(false);
        }, timeoutMs);
        const done = (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        };
        waiters.push(done);
      });
    },
    settle(done) {
      if (waiters.length === 0) return;
      const settled = waiters;
      waiters = [];
      for (const w of settled) w(done);
    },
  };
}
