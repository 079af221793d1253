import { performance } from 'node:perf_hooks';
import { createInbox, headers, type Msg, type MsgHdrs, type Subscription } from '@nats-io/transport-node';
import type { NatsConnection } from './nats.ts';

/**
 * Publishes messages to JetStream and tells each caller when its own message is stored.
 *
 * What `jetstream().publish()` does per message, without its per-message cost: one reply
 * subscription for every ack (instead of a request, two timers' worth of Error objects with
 * stack traces and a timer each), and every publish made while the event loop reads requests
 * goes out in one socket write on the next turn. Any number of messages are in flight; each
 * caller still waits for the PubAck of its own message.
 */
export interface AckPublisher {
  /**
   * Resolves true once JetStream acknowledged the message (stored now, or before under the same
   * msg id), false when it did not within the budget: publishes are retried with the same msg id,
   * so a retry after a lost ack is stored once.
   */
  publish(subject: string, payload: string, msgId: string): Promise<boolean>;
  /** Messages waiting for an ack or for a retry. */
  pending(): number;
  /**
   * Takes no more messages and resolves once every message taken has its answer (acked, or
   * given up at the end of its budget), so a shutdown answers every ping it took.
   */
  close(): Promise<void>;
}

export interface AckPublisherOptions {
  /** How long a message may wait for its ack, retries included (default 8 s). */
  budgetMs?: number;
  /** How long one attempt waits for its ack before it is sent again (default 3 s). */
  attemptTimeoutMs?: number;
  /** A monotonic clock in milliseconds. */
  clock?: () => number;
}

interface Entry {
  token: string;
  subject: string;
  data: string;
  headers: MsgHdrs;
  /** When the message must be acknowledged by, or given up. */
  deadline: number;
  /** When the current attempt gives up waiting for its ack. */
  expires: number;
  attempts: number;
  /** When a failed attempt may be retried. */
  retryAt: number;
  resolve: (stored: boolean) => void;
}

const SWEEP_MS = 50;
const decoder = new TextDecoder();

export function createAckPublisher(nc: NatsConnection, opts: AckPublisherOptions = {}): AckPublisher {
  const budgetMs = opts.budgetMs ?? 8_000;
  const attemptTimeoutMs = opts.attemptTimeoutMs ?? 3_000;
  const clock = opts.clock ?? (() => performance.now());
  const prefix = `${createInbox()}.`;
  /** Sent and waiting for an ack, by reply token. */
  const inFlight = new Map<string, Entry>();
  /** To send on the next turn of the event loop. */
  let outbox: Entry[] = [];
  /** Failed attempts waiting for their retry time. */
  let backingOff: Entry[] = [];
  let sequence = 0;
  let flushScheduled = false;
  let sweeper: NodeJS.Timeout | undefined;
  let closed = false;
  let drained: (() => void) | undefined;

  const pendingCount = () => inFlight.size + outbox.length + backingOff.length;
  const finished = () => {
    if (closed && drained && pendingCount() === 0) {
      sub?.unsubscribe();
      sub = undefined;
      drained();
      drained = undefined;
    }
  };
  const answer = (e: Entry, stored: boolean) => {
    e.resolve(stored);
    if (closed) finished();
  };

  const settle = (e: Entry, stored: boolean) => {
    inFlight.delete(e.token);
    answer(e, stored);
  };

  const retryLater = (e: Entry, now: number) => {
    inFlight.delete(e.token);
    const backoff = Math.min(100 * 2 ** (e.attempts - 1), 1_000);
    if (now + backoff >= e.deadline) return answer(e, false);
    e.retryAt = now + backoff;
    backingOff.push(e);
    startSweeper();
  };

  const flush = () => {
    flushScheduled = false;
    const batch = outbox;
    outbox = [];
    const now = clock();
    for (const e of batch) {
      e.attempts++;
      e.expires = Math.min(now + attemptTimeoutMs, e.deadline);
      inFlight.set(e.token, e);
      try {
        nc.publish(e.subject, e.data, { reply: prefix + e.token, headers: e.headers });
      } catch {
        // Closed or draining connection: retried until the budget runs out.
        retryLater(e, now);
      }
    }
    startSweeper();
  };

  const send = (e: Entry) => {
    outbox.push(e);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };

  const sweep = () => {
    const now = clock();
    for (const e of inFlight.values()) {
      if (e.expires > now) continue;
      inFlight.delete(e.token);
      if (now >= e.deadline) answer(e, false);
      else send(e);
    }
    if (backingOff.length > 0) {
      const waiting = backingOff;
      backingOff = [];
      for (const e of waiting) {
        if (e.retryAt <= now) send(e);
        else backingOff.push(e);
      }
    }
    if (inFlight.size === 0 && backingOff.length === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  function startSweeper() {
    if (!sweeper && (inFlight.size > 0 || backingOff.length > 0)) sweeper = setInterval(sweep, SWEEP_MS);
  }

  const onAck = (err: Error | null, msg: Msg) => {
    if (err) return;
    const e = inFlight.get(msg.subject.slice(prefix.length));
    if (!e) return; // the ack of an attempt already settled or given up
    // No responders (no stream leader yet) comes as an empty status message; an API error as JSON.
    let stored = false;
    if (msg.data.length > 0) {
      try {
        const ack = JSON.parse(decoder.decode(msg.data)) as { stream?: string; error?: unknown };
        stored = ack.error === undefined && typeof ack.stream === 'string' && ack.stream !== '';
      } catch {
        stored = false;
      }
    }
    if (stored) settle(e, true);
    else retryLater(e, clock());
  };

  let sub: Subscription | undefined = nc.subscribe(`${prefix}*`, { callback: onAck });

  return {
    publish(subject, payload, msgId) {
      if (closed) return Promise.resolve(false);
      const h = headers();
      h.set('Nats-Msg-Id', msgId);
      return new Promise<boolean>((resolve) => {
        send({
          token: (sequence++).toString(36),
          subject,
          data: payload,
          headers: h,
          deadline: clock() + budgetMs,
          expires: 0,
          attempts: 0,
          retryAt: 0,
          resolve,
        });
      });
    },
    pending: pendingCount,
    close() {
      closed = true;
      return new Promise<void>((resolve) => {
        const previous = drained;
        drained = () => {
          previous?.();
          resolve();
        };
        finished();
      });
    },
  };
}
