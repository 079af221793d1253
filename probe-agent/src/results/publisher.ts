import type { Logger } from '../../../shared/src/logger.ts';
import { createResultBuffer, type Item } from './buffer.ts';
import { createFlushWaiters } from './flush-waiters.ts';
import { createRetryTimer } from './retry-timer.ts';
import { createSendWindow, type PublishFn } from './send-window.ts';

export type { PublishFn } from './send-window.ts';

export type ResultPublisherOptions = {
  publish: PublishFn;
  log: Logger;
  /** Publishes awaiting their ack at most. */
  window?: number;
  /** Results held at most, sent or not, until acknowledged; beyond it the oldest unsent are dropped. */
  capacity?: number;
  /** First retry delay after a failure (default 250 ms), doubling up to retryMaxMs (default 1 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
};

export type PublisherStats = {
  /** Acknowledged by the server (duplicates included). */
  published: number;
  /** Acknowledged as already stored: a slot published before, by this agent or a peer. */
  duplicates: number;
  /** Held until acknowledged, in flight included. */
  buffered: number;
  inFlight: number;
  /** Dropped unpublished because the buffer was full. */
  dropped: number;
  /** Publish attempts that failed or timed out. */
  failures: number;
};

export type ResultPublisher = {
  push(message: { subject: string; payload: string; msgId: string }): void;
  /** NATS went away: hold every result until one publish goes through again. */
  pause(): void;
  /** NATS is back: retry now rather than at the end of the back-off. */
  resume(): void;
  /**
   * The stream may answer again (a stream leader was elected): retry now rather than at the end
   * of the back-off. Does nothing while results flow.
   */
  retryNow(): void;
  /** Resolves true once everything pushed was acknowledged, false at the time limit. */
  flush(timeoutMs: number): Promise<boolean>;
  stats(): PublisherStats;
  close(): void;
};

export const defaultPublishWindow = 256;
export const defaultBufferCapacity = 100_000;

/** Whether results flow; a failure or a lost connection blocks them until one publish goes through. */
type Flow = {
  blocked: boolean;
  /** Set by pause(): a probe finding nothing to send must not reopen the flow. */
  paused: boolean;
  /** The one result sent while blocked; its ack reopens the flow. */
  probing: Item | undefined;
  closed: boolean;
  /** Results dropped since the flow last reopened: the error is logged at the first, the count when it reopens. */
  droppedInStreak: number;
};

/**
 * Publishes results with a window of outstanding acks, in the order they were pushed. A lost
 * connection or the first failure (stream leader moving, ack timeout) stops new sends; once the
 * window has drained, the oldest unacknowledged result is retried alone with back-off until one
 * succeeds, then the buffer flows again in order. Told that NATS or the stream is back (resume,
 * retryNow), it retries at once without waiting for what is in flight to time out. Retries keep
 * the msg id, so a result whose ack was lost is stored once.
 */
export function createResultPublisher(opts: ResultPublisherOptions): ResultPublisher {
  const capacity = opts.capacity ?? defaultBufferCapacity;
  const log = opts.log;
  const buffer = createResultBuffer(capacity);
  const window = createSendWindow({
    size: opts.window ?? defaultPublishWindow,
    buffer,
    publish: opts.publish,
    onAck: acked,
    onFail: failed,
  });
  const retry = createRetryTimer({
    minMs: opts.retryMinMs ?? 250,
    // A retry is one small message, so retrying every second costs nothing and keeps results at
    // most a second (plus the publish timeout, when nothing answers) behind a new stream leader.
    maxMs: opts.retryMaxMs ?? 1_000,
    fire: probe,
  });
  const flushes = createFlushWaiters();
  const counts = { published: 0, duplicates: 0 };
  const flow: Flow = { blocked: false, paused: false, probing: undefined, closed: false, droppedInStreak: 0 };

  function pump(): void {
    if (!flow.closed && !flow.blocked) window.fill();
  }

  function emptied(): void {
    if (buffer.buffered === 0) flushes.settle(true);
  }

  function acked(item: Item, duplicate: boolean): void {
    if (buffer.complete(item)) {
      counts.published++;
      if (duplicate) counts.duplicates++;
    }
    if (item === flow.probing) reopen();
    emptied();
    if (flow.blocked) retryWhenIdle();
    else pump();
  }

  function reopen(): void {
    flow.probing = undefined;
    flow.blocked = false;
    flow.paused = false;
    retry.reset();
    buffer.rewind();
    log.info({ buffered: buffer.buffered, dropped: flow.droppedInStreak }, 'publishing results again');
    flow.droppedInStreak = 0;
  }

  function failed(item: Item, err: unknown): void {
    if (item === flow.probing) flow.probing = undefined;
    if (!flow.blocked) {
      flow.blocked = true;
      log.warn({ err, buffered: buffer.buffered }, 'publishing results failed: buffering them until NATS answers');
    }
    retryWhenIdle();
  }

  function retryWhenIdle(): void {
    if (!flow.closed && window.inFlight === 0) retry.later();
  }

  function retryNow(): void {
    if (!flow.blocked || flow.closed) return;
    // What is in flight went out while nothing could store it: its answer would be a timeout, up
    // to the publish timeout from now. It is sent again instead (same msg ids, so an earlier
    // attempt that did get stored is not stored twice, and its late ack still counts).
    window.abandon();
    flow.probing = undefined;
    retry.now();
  }

  function probe(): void {
    if (flow.closed || window.inFlight > 0) return;
    const oldest = buffer.oldestQueued();
    if (oldest === undefined) {
      if (flow.paused) return retryWhenIdle();
      flow.blocked = false;
      buffer.rewind();
      return;
    }
    flow.probing = oldest;
    window.send(oldest);
  }

  return {
    push(message) {
      if (flow.closed) return;
      if (buffer.push(message)) {
        if (flow.droppedInStreak++ === 0) log.error({ capacity }, 'result buffer full: dropping the oldest results');
        emptied();
      }
      pump();
    },
    pause() {
      if (flow.closed || flow.paused) return;
      flow.paused = true;
      if (!flow.blocked) log.warn({ buffered: buffer.buffered }, 'NATS connection lost: buffering results');
      flow.blocked = true;
      retryWhenIdle();
    },
    resume() {
      flow.paused = false;
      retryNow();
    },
    retryNow,
    flush(timeoutMs) {
      if (buffer.buffered === 0) return Promise.resolve(true);
      if (flow.closed) return Promise.resolve(false);
      return flushes.wait(timeoutMs);
    },
    stats: () => ({
      published: counts.published,
      duplicates: counts.duplicates,
      buffered: buffer.buffered,
      inFlight: window.inFlight,
      dropped: buffer.dropped,
      failures: window.failures,
    }),
    close() {
      flow.closed = true;
      retry.cancel();
      flushes.settle(false);
    },
  };
}
