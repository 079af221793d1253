import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { ConsumerCounters } from './counters.ts';

/** What a role gives to have its messages handled in batches. */
export interface BatchHandler<T> {
  /**
   * Handles one batch, all or nothing (one transaction): resolved once committed, then every
   * message of the batch is acknowledged. It may resolve with what to do after the
   * acknowledgements (publish what the batch caused).
   */
  commit(values: T[]): Promise<void | (() => Promise<void>)>;
  /**
   * An error the same messages would meet again (a value the database refuses, not a lost
   * connection): the batch is split until the message that causes it is found and terminated.
   */
  refused?(err: unknown): boolean;
  /** Most messages in one batch. */
  batchSize: number;
  /**
   * How long a message may wait for others before a batch smaller than batchSize is handled:
   * messages that arrive close together are handled together.
   */
  lingerMs: number;
  /** Batches handled at once. */
  concurrency: number;
  /** When a failed batch comes again (default 5 s). */
  retryDelayMs?: number;
}

export interface Batches {
  /** A delivered message, queued for the next batch. */
  add(msg: JsMsg): void;
  /** Takes no new batch: batches being handled finish. */
  halt(): void;
  /** Once halted and the pull stopped: waits for the batches being handled, and hands back (nak) what is still queued. */
  stop(): Promise<void>;
}

/**
 * Messages taken in batches. Delivered messages queue here; each of `concurrency` workers takes
 * what has queued, up to a batch, while the next batch keeps arriving, so batches grow with the
 * load. A batch is acknowledged only after it committed; a failed one is handed back (nak with a
 * delay) and comes again later, so `commit` must be idempotent. A message `parse` refuses, or one
 * `refused` finds by splitting its batch, is terminated and counted, never retried.
 */
export function createBatches<T>(opts: {
  handler: BatchHandler<T>;
  /** The batch's messages that are valid, with their values; the others are terminated. */
  parse(msgs: readonly JsMsg[]): { msg: JsMsg; value: T }[];
  counters: ConsumerCounters;
  log: Logger;
  noun: string;
}): Batches {
  const { handler, counters, log, noun } = opts;
  const { batchSize, lingerMs } = handler;
  const queue: JsMsg[] = [];
  // When the oldest queued message arrived.
  let oldestAt = 0;
  const idle: (() => void)[] = [];
  let stopping = false;
  const wakeAll = () => {
    for (const w of idle.splice(0)) w();
  };
  const ready = () => queue.length >= batchSize || (queue.length > 0 && performance.now() - oldestAt >= lingerMs);

  const write = async (items: readonly { msg: JsMsg; value: T }[]): Promise<void> => {
    let after;
    try {
      after = await handler.commit(items.map((i) => i.value));
    } catch (err) {
      const refused = handler.refused?.(err) ?? false;
      if (refused && items.length > 1) {
        const half = Math.ceil(items.length / 2);
        await write(items.slice(0, half));
        await write(items.slice(half));
        return;
      }
      if (refused) {
        counters.invalid++;
        log.warn({ err, subject: items[0]!.msg.subject, seq: items[0]!.msg.seq }, `${noun} refused by its handler terminated`);
        items[0]!.msg.term();
        return;
      }
      counters.failedBatches++;
      log.error({ err, size: items.length }, `${noun} batch not handled; redelivering later`);
      for (const i of items) i.msg.nak(handler.retryDelayMs ?? 5_000);
      return;
    }
    for (const i of items) i.msg.ack();
    counters.handled += items.length;
    counters.batches++;
    if (after) await after();
  };

  const worker = async () => {
    for (;;) {
      if (stopping) return;
      if (!ready()) {
        // A timer may fire a little before performance.now() says the linger is over: without
        // another wake-up, the queue would wait for the next batchSize messages.
        if (queue.length > 0) setTimeout(wakeAll, Math.ceil(lingerMs - (performance.now() - oldestAt)) + 1).unref();
        await new Promise<void>((r) => idle.push(r));
        continue;
      }
      const msgs = queue.splice(0, batchSize);
      // What is left has waited at least as long: the next idle worker may take it at once.
      if (queue.length > 0) wakeAll();
      const valid = opts.parse(msgs);
      if (valid.length > 0) await write(valid).catch((err: unknown) => log.error({ err }, `${noun} batch failed`));
    }
  };
  const workers = Array.from({ length: handler.concurrency }, () => worker());

  return {
    add(msg) {
      if (queue.push(msg) === 1) {
        oldestAt = performance.now();
        setTimeout(wakeAll, lingerMs).unref();
      }
      if (queue.length === batchSize) wakeAll();
    },
    halt() {
      stopping = true;
    },
    async stop() {
      stopping = true;
      wakeAll();
      await Promise.all(workers);
      // Handed back at once, for another process of the role or the next start.
      for (const m of queue.splice(0)) m.nak();
    },
  };
}
