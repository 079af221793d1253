import { AckPolicy, jetstream, jetstreamManager, type Consumer, type ConsumerConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '../../../../shared/src/nats.ts';

/**
 * Creates a durable pull consumer (explicit acks, redelivered without limit unless told
 * otherwise), or opens it when another process of the same role created it first.
 */
export async function durableConsumer(
  nc: NatsConnection,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<Consumer> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(stream, { ack_policy: AckPolicy.Explicit, max_deliver: -1, ...config }).catch(async (err: unknown) => {
    if (!(await jsm.consumers.info(stream, config.durable_name).catch(() => undefined))) throw err;
  });
  return jetstream(nc).consumers.get(stream, config.durable_name);
}
