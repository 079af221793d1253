import type { Logger } from '../../../shared/src/logger.ts';

/** Publishes one message with its dedupe id and resolves on the server's ack. */
export type PublishFn = (subject: string, payload: string, msgId: string) => Promise<{ duplicate: boolean }>;

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

const QUEUED = 0;
const IN_FLIGHT = 1;
const DONE = 2;

/** `sends` numbers the attempts: only the answer to the latest one moves the item on. */
type Item = { subject: string; payload: string; msgId: string; state: number; sends: number };

/**
 * Publishes results with a window of outstanding acks, in the order they were pushed. A lost
 * connection or the first failure (stream leader moving, ack timeout) stops new sends; once the
 * window has drained, the oldest unacknowledged result is retried alone with back-off until one
 * succeeds, then the buffer flows again in order. Told that NATS or the stream is back (resume,
 * retryNow), it retries at once without waiting for what is in flight to time out. Retries keep
 * the msg id, so a result whose ack was lost is stored once.
 */
export function createResultPublisher(opts: ResultPublisherOptions): ResultPublisher {
  const window = opts.window ?? defaultPublishWindow;
  const capacity = opts.capacity ?? defaultBufferCapacity;
  const retryMinMs = opts.retryMinMs ?? 250;
  // A retry is one small message, so retrying every second costs nothing and keeps results at
  // most a second (plus the publish timeout, when nothing answers) behind a new stream leader.
  const retryMaxMs = opts.retryMaxMs ?? 1_000;
  const log = opts.log;

  let items: Item[] = [];
  let head = 0;
  let next = 0;
  const counters = { published: 0, duplicates: 0, buffered: 0, inFlight: 0, dropped: 0, failures: 0 };
  let blocked = false;
  /** Set by pause(): a probe finding nothing to send must not reopen the flow. */
  let paused = false;
  let probing: Item | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let backoffMs = retryMinMs;
  let closed = false;
  let droppedInStreak = 0;
  let waiters: Array<(done: boolean) => void> = [];

  function compact(): void {
    while (head < items.length && items[head]!.state === DONE) head++;
    if (head > 1024 && head * 2 > items.length) {
      items = items.slice(head);
      next = Math.max(0, next - head);
      head = 0;
    }
    if (next < head) next = head;
    if (counters.buffered === 0 && waiters.length > 0) {
      for (const w of waiters) w(true);
      waiters = [];
    }
  }

  function dropOldest(): void {
    for (let i = head; i < items.length; i++) {
      const item = items[i]!;
      if (item.state !== QUEUED) continue;
      item.state = DONE;
      counters.buffered--;
      counters.dropped++;
      if (droppedInStreak++ === 0) log.error({ capacity }, 'result buffer full: dropping the oldest results');
      return;
    }
  }

  function pump(): void {
    if (closed || blocked) return;
    while (counters.inFlight < window && next < items.length) {
      const item = items[next++]!;
      if (item.state === QUEUED) send(item);
    }
  }

  function send(item: Item): void {
    item.state = IN_FLIGHT;
    counters.inFlight++;
    const attempt = ++item.sends;
    let sending: Promise<{ duplicate: boolean }>;
    try {
      sending = opts.publish(item.subject, item.payload, item.msgId);
    } catch (err) {
      sending = Promise.reject(err);
    }
    sending.then(
      (ack) => acked(item, ack.duplicate, attempt),
      (err: unknown) => failed(item, err, attempt),
    );
  }

  function acked(item: Item, duplicate: boolean, attempt: number): void {
    // An abandoned attempt no longer counts as in flight, but its ack still means stored.
    if (attempt === item.sends) counters.inFlight--;
    if (item.state !== DONE) {
      item.state = DONE;
      counters.buffered--;
      counters.published++;
      if (duplicate) counters.duplicates++;
    }
    if (item === probing) {
      probing = undefined;
      blocked = false;
      paused = false;
      backoffMs = retryMinMs;
      next = head;
      log.info({ buffered: counters.buffered, dropped: droppedInStreak }, 'publishing results again');
      droppedInStreak = 0;
    }
    compact();
    if (blocked) retryWhenIdle();
    else pump();
  }

  function failed(item: Item, err: unknown, attempt: number): void {
    counters.failures++;
    if (attempt !== item.sends) return;
    counters.inFlight--;
    if (item.state === IN_FLIGHT) item.state = QUEUED;
    if (item === probing) probing = undefined;
    if (!blocked) {
      blocked = true;
      log.warn({ err, buffered: counters.buffered }, 'publishing results failed: buffering them until NATS answers');
    }
    retryWhenIdle();
  }

  function retryWhenIdle(): void {
    if (closed || retryTimer !== undefined || counters.inFlight > 0) return;
    retryTimer = setTimeout(probe, backoffMs);
    backoffMs = Math.min(retryMaxMs, backoffMs * 2);
  }

  function retryNow(): void {
    if (!blocked || closed) return;
    // What is in flight went out while nothing could store it: its answer would be a timeout, up
    // to the publish timeout from now. It is sent again instead (same msg ids, so an earlier
    // attempt that did get stored is not stored twice, and its late ack still counts).
    for (let i = head; i < items.length; i++) {
      const item = items[i]!;
      if (item.state !== IN_FLIGHT) continue;
      item.state = QUEUED;
      item.sends++;
      counters.inFlight--;
    }
    probing = undefined;
    backoffMs = retryMinMs;
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    retryTimer = setTimeout(probe, 0);
  }

  function probe(): void {
    retryTimer = undefined;
    if (closed || counters.inFlight > 0) return;
    let oldest: Item | undefined;
    for (let i = head; i < items.length && oldest === undefined; i++) if (items[i]!.state === QUEUED) oldest = items[i];
    if (oldest === undefined) {
      if (paused) return retryWhenIdle();
      blocked = false;
      next = head;
      return;
    }
    probing = oldest;
    send(oldest);
  }

  return {
    push(message) {
      if (closed) return;
      items.push({ ...message, state: QUEUED, sends: 0 });
      counters.buffered++;
      if (counters.buffered > capacity) {
        dropOldest();
        compact();
      }
      pump();
    },
    pause() {
      if (closed || paused) return;
      paused = true;
      if (!blocked) log.warn({ buffered: counters.buffered }, 'NATS connection lost: buffering results');
      blocked = true;
      retryWhenIdle();
    },
    resume() {
      paused = false;
      retryNow();
    },
    retryNow,
    flush(timeoutMs) {
      if (counters.buffered === 0) return Promise.resolve(true);
      if (closed) return Promise.resolve(false);
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
    stats: () => ({ ...counters }),
    close() {
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      retryTimer = undefined;
      for (const w of waiters) w(false);
      waiters = [];
    },
  };
}
