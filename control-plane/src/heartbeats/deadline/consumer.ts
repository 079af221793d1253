import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { startConsumer, type ConsumerCounters } from '../../platform/nats/consumer.ts';
import { Ping } from '../../../../shared/src/contracts/pings.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import type { Names } from '../../../../shared/src/subjects.ts';

export const consumerName = (partition: number) => `deadline-${partition}`;

/** Pings of a partition delivered and not yet answered, at most: the server delivers no more until some are. */
export const MAX_ACK_PENDING = 4_000;

export interface PartitionConsumer {
  /** Ends once the pull in progress has expired (at most `expiresMs`): nothing delivered is dropped. */
  stop(): Promise<void>;
  /** The consumer's own counts: pings not yet delivered, and delivered ones not yet answered (by anyone). */
  state(): Promise<{ pending: number; ackPending: number }>;
}

/**
 * The durable consumer of one PINGS partition, shared by whichever process holds the partition's
 * lease, through the consumer kit (platform/nats/consumer.ts). Explicit acks, sent only after the
 * ping's effects committed; a delivery not acknowledged within `ackWaitMs` (its process died)
 * goes to the next holder. Pulls expire every second, so a process that gives the partition back
 * has stopped pulling a second later; a new consumer leader is pulled from as soon as it is
 * announced. A message that is not a valid ping is terminated and logged.
 */
export async function consumePartition(opts: {
  nc: NatsConnection;
  names: Names;
  partition: number;
  log: Logger;
  /** Every delivery, valid or not, before it is parsed: false when the role has the ping already. */
  onDelivered(msg: JsMsg): boolean;
  onPing(msg: JsMsg, ping: Ping): void;
  /** How an invalid ping is terminated (the role answers every delivery it holds). */
  terminate(msg: JsMsg): void;
  /** A pull ended: how many pings it delivered, and how many waited behind the last one. */
  onPulled?(delivered: number, pendingAfter: number | undefined): void;
  /** Where invalid pings are counted, shared by the partitions of a process. */
  counters: ConsumerCounters;
  ackWaitMs?: number;
  expiresMs?: number;
}): Promise<PartitionConsumer> {
  const consumer = await startConsumer({
    nc: opts.nc,
    log: opts.log,
    stream: opts.names.streams.pings,
    config: {
      durable_name: consumerName(opts.partition),
      filter_subject: opts.names.subjects.pingPartition(opts.partition),
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(opts.ackWaitMs ?? 10_000),
      max_ack_pending: MAX_ACK_PENDING,
    },
    schema: Ping,
    noun: 'ping',
    pull: {
      kind: 'rounds',
      // Small rounds, so that a partition pinged steadily ends its rounds by count, not by their
      // expiry: a round that expires can leave the partition with no delivery for about a second
      // (nats-server 2.9 with nats.js fetch; the pull then ends with "heartbeats missed"), and a
      // partition with pings waiting judges its deadlines by the newest one delivered (ADR 0021),
      // so its misses waited that second too (ADR 0045).
      maxMessages: 100,
      expiresMs: opts.expiresMs ?? 1_000,
      ...(opts.onPulled ? { onPulled: opts.onPulled } : {}),
    },
    handler: { kind: 'messages', delivered: opts.onDelivered, handle: opts.onPing, terminate: opts.terminate },
    counters: opts.counters,
  });
  return {
    stop: () => consumer.stop(),
    async state() {
      const info = await consumer.info();
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    },
  };
}
