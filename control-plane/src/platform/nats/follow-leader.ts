import type { Consumer, ConsumeMessages, ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';

/** What JetStream announces when a consumer gets a leader. */
export const consumerLeaderElected = (stream: string, consumer: string) =>
  `$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${stream}.${consumer}`;

/**
 * How long a pull of consume() lasts. Its idle heartbeats come every half of it, and two missed
 * ones make consume() pull again: the fallback when the election below is not heard.
 */
const defaultExpiresMs = 2_000;

export interface FollowingMessages {
  /** Stops pulling; what was delivered and not answered comes again after the ack wait. */
  close(): Promise<void>;
}

/**
 * consume() on a durable pull consumer, made again whenever the consumer gets a new leader.
 * Pull requests wait on the leader and die with it; on its own, consume() notices only after two
 * missed heartbeats and then asks for consumer info, which times out until a new leader is
 * elected, with the pull's expiry as its back-off. Pulling from the new leader as soon as it
 * announces itself resumes delivery within moments of the election. A message in flight to the
 * replaced pull is dropped by the client and redelivered after the ack wait, never lost.
 */
export async function consumeFollowingLeader(opts: {
  nc: NatsConnection;
  consumer: Consumer;
  stream: string;
  durable: string;
  options: ConsumeMessages & { callback: NonNullable<ConsumeMessages['callback']> };
  log: Logger;
}): Promise<FollowingMessages> {
  const options = { expires: defaultExpiresMs, ...opts.options };
  let current: ConsumerMessages = await opts.consumer.consume(options);
  let closed = false;
  let replacing = Promise.resolve();
  const sub = opts.nc.subscribe(consumerLeaderElected(opts.stream, opts.durable), {
    callback: () => {
      replacing = replacing
        .then(async () => {
          if (closed) return;
          const old = current;
          current = await opts.consumer.consume(options);
          opts.log.info({ consumer: opts.durable }, 'consumer has a new leader: pulling from it');
          old.stop();
        })
        .catch((err: unknown) => opts.log.warn({ err, consumer: opts.durable }, 'pulling from the new consumer leader failed'));
    },
  });
  return {
    async close() {
      closed = true;
      sub.unsubscribe();
      await replacing;
      await current.close();
    },
  };
}
