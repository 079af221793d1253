import type { Logger } from '../../../../shared/src/logger.ts';
import type { Sql } from './sql.ts';

/**
 * Wakes a worker whose queue is a table when Postgres announces work on `channel` (a trigger's
 * pg_notify, sent when its transaction commits). A wake-up is a hint, never the only way work is
 * found: the worker also looks every `wait(maxMs)`, so a notification lost with a connection
 * delays work by that much at most.
 */
export interface Wakeup {
  /** Resolves on the next notification (or one that came since the last wait), or after `maxMs`. */
  wait(maxMs: number): Promise<void>;
  /** Ends the current wait at once (work was found, or the worker stops). */
  wake(): void;
  close(): Promise<void>;
}

export function listenForWork(sql: Sql, channel: string, log: Logger): Wakeup {
  let pending = false;
  let waiter: (() => void) | undefined;
  let closed = false;
  const wake = () => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w();
    } else pending = true;
  };
  // Notifications sent while the listening connection was away are gone: look once it is back.
  const listening = sql.listen(channel, wake, wake).catch((err: unknown) => {
    log.warn({ err, channel }, 'not listening for work; looking for it on a timer only');
    return undefined;
  });
  return {
    wake,
    wait(maxMs) {
      if (pending || closed) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          if (waiter === done) waiter = undefined;
          resolve();
        }, maxMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiter = done;
      });
    },
    async close() {
      closed = true;
      wake();
      await (await listening)?.unlisten().catch(() => {});
    },
  };
}
