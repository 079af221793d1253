/**
 * Writes items in batches without waiting to fill one: the first item is written at once, and
 * the items that come while a write is in flight are written together by the next one (what
 * Postgres calls a group commit). Idle, an item costs one write as before; under load, one
 * round trip and one commit (one WAL flush) serve every send that finished meanwhile. Each
 * caller's promise settles with the result of the write that held its item, so a caller knows
 * its own item was written before it goes on.
 */
export function groupCommit<T, R>(write: (items: T[]) => Promise<R>, maxBatch: number): (item: T) => Promise<R> {
  let queue: { item: T; settle: (r: Promise<R>) => void }[] = [];
  let writing = false;
  const drain = async () => {
    writing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(maxBatch);
      const result = write(batch.map((b) => b.item));
      for (const b of batch) b.settle(result);
      await result.catch(() => {});
    }
    writing = false;
  };
  return (item) =>
    new Promise<R>((resolve) => {
      queue.push({ item, settle: resolve });
      if (!writing) void drain();
    });
}
