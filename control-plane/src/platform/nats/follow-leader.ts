import type { Consumer, ConsumeMessages, ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';

/** What JetStream announces when a consumer gets a leader. */
export const consumerLeaderElected = (stream: string, consumer: string) =>
  `$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${stream}.${consumer}`;

/**
 * Calls `onElected` whenever the consumer gets a new leader; returns what stops listening.
 * Pull requests wait on the leader and die with it: a client that only waits notices after two
 * missed idle heartbeats, and pulls in vain until the election is over. Pulling again as soon as
 * the new leader announces itself resumes delivery within moments of the election. A process
 * that may not subscribe to advisories (NATS permissions) still recovers through the heartbeats.
 */
export function whenLeaderElected(nc: NatsConnection, stream: string, durable: string, onElected: () => void): () => void {
  const sub = nc.subscribe(consumerLeaderElected(stream, durable), { callback: () => onElected() });
  return () => sub.unsubscribe();
}

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
 * consume() on a durable pull consumer, made again whenever the consumer gets a new leader. On
 * its own, consume() notices a dead leader only after two missed heartbeats and then asks for
 * consumer info, which times out until a new leader is elected, with the pull's expiry as its
 * back-off. A message in flight to the replaced pull is dropped by the client and redelivered
 * after the ack wait, never lost.
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
  const unfollow = whenLeaderElected(opts.nc, opts.stream, opts.durable, () => {
    replacing = replacing
      .then(async () => {
        if (closed) return;
        const old = current;
        current = await opts.consumer.consume(options);
        opts.log.info({ consumer: opts.durable }, 'consumer has a new leader: pulling from it');
        old.stop();
      })
      .catch((err: unknown) => opts.log.warn({ err, consumer: opts.durable }, 'pulling from the new consumer leader failed'));
  });
  return {
    async close() {
      closed = true;
      unfollow();
      await replacing;
      await current.close();
    },
  };
}
