import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { HeartbeatEntry } from '../../../../shared/src/contracts/pings.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';

export interface HeartbeatsProjection {
  put(id: string, projectId: string): Promise<void>;
  remove(id: string): Promise<void>;
  /**
   * Makes the keys `inScope` selects exactly the heartbeats of `wanted` (id → project id): adds
   * the missing, deletes the rest. Takes what it needs out of `wanted`, which it leaves empty.
   * `wanted` was read before the listing, and heartbeats are created and deleted meanwhile (their
   * keys written by the steps of their changes): each key it would add or delete is checked
   * against `current` (what the table holds now, id → project id) first, so a heartbeat created
   * after the read keeps its key and one deleted after it does not get one back.
   * `abandoned` stops it between keys (the process is stopping): nothing more is written.
   */
  reconcile(
    wanted: Map<string, string>,
    inScope: (id: string) => boolean,
    current: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>,
    abandoned?: () => boolean,
  ): Promise<{ puts: number; deletes: number }>;
}

/** Keys checked against the table per query. */
const RECHECK = 5_000;

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Every live key of a KV bucket, read `page` at a time by an ordered pull consumer of the
 * bucket's stream (headers only). The buckets keep one message per key (history 1,
 * shared/src/provision.ts), so every message of the stream is its key's last: the consumer reads
 * them all, from the first, and the server does not work out each key's last message when it is
 * created (for a million keys, seconds in which its JetStream API answers nothing else: lease
 * writes of every process timed out behind it). `kv.keys()` has them pushed at once:
 * a million keys then fill the connection for seconds, and the process's other requests on it
 * (lease renewals, consumers being created) wait behind them until they time out. With `rest`,
 * it pauses after each page `rest` times as long as the page took: a listing in the background
 * leaves the server and the process that share of their time for the work that matters now.
 */
export async function* pagedKeys(nc: NatsConnection, bucket: string, page = 10_000, rest = 0): AsyncIterable<string> {
  const prefix = `$KV.${bucket}.`;
  const consumer = await jetstream(nc, { timeout: 30_000 }).consumers.get(`KV_${bucket}`, {
    filter_subjects: `${prefix}>`,
    deliver_policy: DeliverPolicy.All,
    headers_only: true,
  });
  try {
    if ((await consumer.info(true)).num_pending === 0) return;
    for (;;) {
      let last = false;
      let got = 0;
      const started = performance.now();
      for await (const m of await consumer.fetch({ max_messages: page, expires: 5_000 })) {
        got++;
        const op = m.headers?.get('KV-Operation');
        if (op !== 'DEL' && op !== 'PURGE') yield m.subject.slice(prefix.length);
        if (m.info.pending === 0) {
          last = true;
          break;
        }
      }
      if (last) return;
      if (got === 0) throw new Error(`KV ${bucket}: no key read within 5 s while some remained`);
      if (rest > 0) await new Promise((r) => setTimeout(r, (performance.now() - started) * rest));
    }
  } finally {
    await consumer.delete().catch(() => {});
  }
}

/**
 * KV `heartbeats`, the projection of the heartbeats table that ping edges check ids against.
 * The holder of a partition keeps that partition's keys, so each key has one writer at a time.
 * A value never changes while its key lives (a heartbeat never moves project), so keeping it
 * current is a matter of which keys exist.
 */
export function createHeartbeatsProjection(kv: KV, keys: () => AsyncIterable<string> = () => kvKeys(kv)): HeartbeatsProjection {
  const put = async (id: string, projectId: string) => {
    await kv.put(id, JSON.stringify({ project_id: projectId } satisfies HeartbeatEntry));
  };
  const remove = async (id: string) => {
    await kv.delete(id);
  };
  return {
    put,
    remove,
    async reconcile(wanted, inScope, current, abandoned = () => false) {
      // A key of a wanted heartbeat is checked off; any other of the scope is an orphan. Only
      // keys outside `wanted` ask `inScope`, which may hash the id.
      const orphans: string[] = [];
      let seen = 0;
      for await (const key of keys()) {
        if (++seen % 10_000 === 0 && abandoned()) {
          wanted.clear();
          return { puts: 0, deletes: 0 };
        }
        if (!wanted.delete(key) && inScope(key)) orphans.push(key);
      }
      if (abandoned()) {
        wanted.clear();
        return { puts: 0, deletes: 0 };
      }
      const missing = [...wanted.keys()];
      wanted.clear();
      let puts = 0;
      let deletes = 0;
      for (let i = 0; i < missing.length; i += RECHECK) {
        if (abandoned()) break;
        const now = await current(missing.slice(i, i + RECHECK));
        await inParallel([...now], 64, ([id, projectId]) => put(id, projectId));
        puts += now.size;
      }
      for (let i = 0; i < orphans.length; i += RECHECK) {
        if (abandoned()) break;
        const batch = orphans.slice(i, i + RECHECK);
        const now = await current(batch);
        const gone = batch.filter((id) => !now.has(id));
        await inParallel(gone, 64, remove);
        deletes += gone.length;
      }
      return { puts, deletes };
    },
  };
}

async function* kvKeys(kv: KV): AsyncIterable<string> {
  yield* await kv.keys();
}
