import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../nats/durable.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';

export const consumerName = (partition: number) => `deadline-${partition}`;

export interface PartitionConsumer {
  /** Ends once the pull in progress has expired (at most `expiresMs`): nothing delivered is dropped. */
  stop(): Promise<void>;
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
    max_ack_pending: 1_000,
  });
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const iter = await consumer.fetch({ max_messages: 256, expires: opts.expiresMs ?? 1_000 });
        for await (const m of iter) opts.onMessage(m);
      } catch (err) {
        if (stopped) break;
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
  };
}
