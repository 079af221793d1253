import type { KV } from '@nats-io/kv';

/** Which of these (lower-case) heartbeat ids exist. */
export type HeartbeatLookup = (heartbeatIds: readonly string[]) => Promise<Iterable<string>>;

/** Whether one heartbeat exists; rejects when the answer did not come in time. */
export type HeartbeatCheck = (heartbeatId: string) => Promise<boolean>;

export interface BatchOptions {
  /** How long a batch may take before its callers are told it failed. */
  timeoutMs: number;
  /** Ids per lookup (default 500). */
  maxBatch?: number;
  /** Lookups running at once; more ids wait and join the next batch (default 4). */
  maxInFlight?: number;
}

interface Waiter {
  promise: Promise<boolean>;
  resolve: (known: boolean) => void;
  reject: (err: Error) => void;
}

/**
 * Checks ids one at a time for its callers and many at a time against the store: the ids asked
 * for while the event loop reads requests become one lookup on the next turn, so a thousand
 * pings a second cost a few queries, each answered from the truth (a heartbeat deleted a moment
 * ago is not found).
 */
export function batchLookups(lookup: HeartbeatLookup, opts: BatchOptions): HeartbeatCheck {
  const maxBatch = opts.maxBatch ?? 500;
  const maxInFlight = opts.maxInFlight ?? 4;
  let waiting = new Map<string, Waiter>();
  let inFlight = 0;
  let scheduled = false;

  const schedule = () => {
    if (scheduled || waiting.size === 0 || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  };

  const run = (batch: Map<string, Waiter>) => {
    inFlight++;
    let done = false;
    const finish = (outcome: Set<string> | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      inFlight--;
      for (const [id, w] of batch) {
        if (outcome instanceof Error) w.reject(outcome);
        else w.resolve(outcome.has(id));
      }
      schedule();
    };
    const timer = setTimeout(() => finish(new Error(`heartbeat lookup took longer than ${opts.timeoutMs} ms`)), opts.timeoutMs);
    lookup([...batch.keys()]).then(
      (found) => finish(found instanceof Set ? found : new Set(found)),
      (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
    );
  };

  function flush() {
    scheduled = false;
    while (waiting.size > 0 && inFlight < maxInFlight) {
      if (waiting.size <= maxBatch) {
        const batch = waiting;
        waiting = new Map();
        run(batch);
      } else {
        const batch = new Map<string, Waiter>();
        for (const [id, w] of waiting) {
          batch.set(id, w);
          waiting.delete(id);
          if (batch.size === maxBatch) break;
        }
        run(batch);
      }
    }
  }

  return (id) => {
    const existing = waiting.get(id);
    if (existing) return existing.promise;
    let resolve!: Waiter['resolve'];
    let reject!: Waiter['reject'];
    const promise = new Promise<boolean>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    waiting.set(id, { promise, resolve, reject });
    schedule();
    return promise;
  };
}

/** An id is known when KV `heartbeats` holds it. */
export function kvLookup(kv: KV): HeartbeatLookup {
  return async (ids) => {
    const entries = await Promise.all(ids.map((id) => kv.get(id)));
    return ids.filter((_, i) => entries[i]?.operation === 'PUT');
  };
}
