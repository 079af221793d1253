import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../../platform/nats/durable.ts';
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
 * lease. Explicit acks, sent only after the ping's effects committed; a delivery not acknowledged
 * within `ackWaitMs` (its process died) goes to the next holder. Pulls expire every second, so a
 * process that gives the partition back has stopped pulling a second later.
 */
export async function consumePartition(opts: {
  nc: NatsConnection;
  names: Names;
  partition: number;
  log: Logger;
  onMessage(msg: JsMsg): void;
  /** A pull ended: how many pings it delivered, and how many waited behind the last one. */
  onPulled?(delivered: number, pendingAfter: number | undefined): void;
  ackWaitMs?: number;
  expiresMs?: number;
}): Promise<PartitionConsumer> {
  const stream = opts.names.streams.pings;
  const durable = consumerName(opts.partition);
  const consumer = await durableConsumer(opts.nc, stream, {
    durable_name: durable,
    filter_subject: opts.names.subjects.pingPartition(opts.partition),
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(opts.ackWaitMs ?? 10_000),
    max_ack_pending: MAX_ACK_PENDING,
  });
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const iter = await consumer.fetch({ max_messages: 1_000, expires: opts.expiresMs ?? 1_000 });
        let delivered = 0;
        let pendingAfter: number | undefined;
        for await (const m of iter) {
          delivered++;
          pendingAfter = m.info.pending;
          opts.onMessage(m);
        }
        opts.onPulled?.(delivered, pendingAfter);
      } catch (err) {
        if (stopped) break;
        // A pull whose idle heartbeats came late (this process busy, or the server holding back
        // while every allowed delivery waits for its answer) ends with this: pull again at once.
        if (err instanceof Error && err.message === 'heartbeats missed') {
          opts.log.debug({ partition: opts.partition }, 'pull ended without heartbeats; pulling again');
          continue;
        }
        opts.log.warn({ err, partition: opts.partition }, 'fetching pings failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
    async state() {
      const info = await consumer.info(false);
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    },
  };
}
