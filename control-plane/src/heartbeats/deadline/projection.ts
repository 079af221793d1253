import type { KV } from '@nats-io/kv';
import type { HeartbeatEntry } from '../../../../shared/src/contracts/pings.ts';

export interface HeartbeatsProjection {
  put(id: string, projectId: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** Makes the keys `inScope` selects exactly these heartbeats: adds the missing, deletes the rest. */
  reconcile(
    rows: readonly { id: string; project_id: string }[],
    inScope: (id: string) => boolean,
  ): Promise<{ puts: number; deletes: number }>;
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * KV `heartbeats`, the projection of the heartbeats table that ping edges check ids against.
 * The holder of a partition keeps that partition's keys, so each key has one writer at a time.
 * A value never changes while its key lives (a heartbeat never moves project), so keeping it
 * current is a matter of which keys exist.
 */
export function createHeartbeatsProjection(kv: KV): HeartbeatsProjection {
  const put = async (id: string, projectId: string) => {
    await kv.put(id, JSON.stringify({ project_id: projectId } satisfies HeartbeatEntry));
  };
  const remove = async (id: string) => {
    await kv.delete(id);
  };
  return {
    put,
    remove,
    async reconcile(rows, inScope) {
      const present = new Set<string>();
      for await (const key of await kv.keys()) if (inScope(key)) present.add(key);
      const wanted = new Set(rows.map((r) => r.id));
      const missing = rows.filter((r) => !present.has(r.id));
      const orphans = [...present].filter((id) => !wanted.has(id));
      await inParallel(missing, 64, (r) => put(r.id, r.project_id));
      await inParallel(orphans, 64, remove);
      return { puts: missing.length, deletes: orphans.length };
    },
  };
}
