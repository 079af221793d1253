import type { KV, KvWatchEntry } from '@nats-io/kv';

/** Watches every key; `caughtUp` resolves once the values present at the start were delivered. */
export async function watchAll(kv: KV, onEntry: (e: KvWatchEntry) => void): Promise<{ caughtUp: Promise<void>; stop(): void }> {
  const empty = (await kv.status()).values === 0;
  const iter = await kv.watch({ key: '>' });
  let resolve!: () => void;
  const caughtUp = new Promise<void>((r) => (resolve = r));
  if (empty) resolve();
  void (async () => {
    for await (const e of iter) {
      onEntry(e);
      if ((e.delta ?? 0) === 0) resolve();
    }
  })();
  return { caughtUp, stop: () => iter.stop() };
}

export function safeJson(e: { json(): unknown }): unknown {
  try {
    return e.json();
  } catch {
    return undefined;
  }
}
