import type { ConsumerConfig, ConsumerInfo, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import { createBatches, type BatchHandler, type Batches } from './batches.ts';
import { newCounters, type ConsumerCounters } from './counters.ts';
import { durableConsumer } from './durable.ts';
import { consumeFollowingLeader } from './follow-leader.ts';
import { parseOrTerminate, type MessageCheck } from './parse.ts';
import { pullInRounds } from './rounds.ts';

export type { BatchHandler } from './batches.ts';
export { newCounters, type ConsumerCounters } from './counters.ts';

/** How messages are pulled. Either way, a new consumer leader is pulled from as soon as it is announced. */
export type Pull =
  /**
   * Continuously (consume()): the next pull is asked for before the last one is used up, and
   * stopping drops what is in flight (it comes again after the ack wait). For throughput.
   */
  | { kind: 'continuous'; maxMessages: number; expiresMs?: number }
  /**
   * In rounds (fetch()), each reported when it ends (rounds.ts): for a role that must know
   * whether a backlog remains. Stopping waits for the round in progress to expire, so nothing
   * delivered is dropped.
   */
  | {
      kind: 'rounds';
      maxMessages: number;
      expiresMs: number;
      /** A round ended: how many messages it delivered, and how many waited behind the last one. */
      onPulled?(delivered: number, pendingAfter: number | undefined): void;
    };

/** Messages handed to the role one at a time; the role answers each (ack, nak, term) when it is done with it. */
export interface MessageHandler<T> {
  kind: 'messages';
  /**
   * Sees every delivery first, valid or not (what it says about the stream). False when the role
   * has the message already (a redelivery joined to the first): it is not parsed or handed over.
   */
  delivered?(msg: JsMsg): boolean;
  handle(msg: JsMsg, value: T): void;
  /** How an invalid message is terminated, for a role that keeps track of its deliveries (default msg.term()). */
  terminate?(msg: JsMsg): void;
}

export interface ConsumerSpec<T> extends MessageCheck<T> {
  nc: NatsConnection;
  log: Logger;
  stream: string;
  /** The durable pull consumer, created or opened by durable.ts (explicit acks, redelivered without limit by default). */
  config: Partial<ConsumerConfig> & { durable_name: string };
  pull: Pull;
  handler: MessageHandler<T> | ({ kind: 'batches' } & BatchHandler<T>);
  /** Where to count; one of its own by default. */
  counters?: ConsumerCounters;
}

export interface RunningConsumer {
  stats(): ConsumerCounters;
  /** The consumer's state as the server has it now. */
  info(): Promise<ConsumerInfo>;
  /**
   * Stops pulling. What was delivered is handled or handed back before this resolves: batches
   * being handled finish, queued messages are handed back (nak); one at a time, every delivery
   * has reached the role.
   */
  stop(): Promise<void>;
}

const terminateOnce = (m: JsMsg) => {
  try {
    m.term();
  } catch {
    // NATS away: the delivery comes again after the ack wait and is terminated then.
  }
};

/**
 * One durable pull consumer of a role, which gives only what a message is (its schema) and how
 * to handle it: the kit creates or opens the durable, pulls (following leader changes),
 * terminates, logs and counts what does not parse, and hands over the rest one at a time or in
 * batches, acknowledged after commit.
 */
export async function startConsumer<T>(spec: ConsumerSpec<T>): Promise<RunningConsumer> {
  const { nc, log, stream, handler } = spec;
  const durable = spec.config.durable_name;
  const consumer = await durableConsumer(nc, stream, spec.config);
  const counters = spec.counters ?? newCounters();
  const terminate = (handler.kind === 'messages' && handler.terminate) || terminateOnce;
  const parse = (msg: JsMsg) => parseOrTerminate(msg, spec, { log, terminate, counted: () => counters.invalid++ });

  let batches: Batches | undefined;
  let onMessage: (msg: JsMsg) => void;
  if (handler.kind === 'batches') {
    const b = createBatches({
      handler,
      parse: (msgs) => {
        const valid: { msg: JsMsg; value: T }[] = [];
        for (const msg of msgs) {
          const value = parse(msg);
          if (value !== undefined) valid.push({ msg, value });
        }
        return valid;
      },
      counters,
      log,
      noun: spec.noun,
    });
    batches = b;
    onMessage = (msg) => b.add(msg);
  } else {
    onMessage = (msg) => {
      if (handler.delivered && !handler.delivered(msg)) return;
      const value = parse(msg);
      if (value === undefined) return;
      counters.handled++;
      handler.handle(msg, value);
    };
  }

  const pull = spec.pull;
  let pulling: { stop(): Promise<void> };
  try {
    if (pull.kind === 'rounds') {
      pulling = pullInRounds({
        nc,
        consumer,
        stream,
        durable,
        log,
        maxMessages: pull.maxMessages,
        expiresMs: pull.expiresMs,
        onMessage,
        ...(pull.onPulled ? { onPulled: pull.onPulled } : {}),
      });
    } else {
      const messages = await consumeFollowingLeader({
        nc,
        consumer,
        stream,
        durable,
        log,
        options: { max_messages: pull.maxMessages, ...(pull.expiresMs ? { expires: pull.expiresMs } : {}), callback: onMessage },
      });
      pulling = { stop: () => messages.close().then(() => {}) };
    }
  } catch (err) {
    batches?.halt();
    await batches?.stop();
    throw err;
  }

  return {
    stats: () => ({ ...counters }),
    info: () => consumer.info(false),
    async stop() {
      batches?.halt();
      await pulling.stop().catch(() => {});
      await batches?.stop();
    },
  };
}
