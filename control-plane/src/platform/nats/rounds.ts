import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import { whenLeaderElected } from './follow-leader.ts';

export interface Rounds {
  /** Ends once the round in progress has expired (at most `expires`): nothing delivered is dropped. */
  stop(): Promise<void>;
}

/**
 * Pulls in rounds: one fetch of up to `maxMessages`, lasting at most `expiresMs`, then the next.
 * Each message goes to `onMessage` as it arrives; when a round ends, `onPulled` learns how many it
 * delivered and how many waited in the stream behind the last one, which tells a role whether a
 * backlog remains. A round whose idle heartbeats came late (this process busy, or the server
 * holding back while every allowed delivery waits for its answer) ends with 'heartbeats missed'
 * and is followed at once; any other failure, a second later. When the consumer gets a new
 * leader, the round in progress is ended and the next one asks the new leader.
 */
export function pullInRounds(opts: {
  nc: NatsConnection;
  consumer: Consumer;
  stream: string;
  durable: string;
  log: Logger;
  maxMessages: number;
  expiresMs: number;
  onMessage(msg: JsMsg): void;
  onPulled?(delivered: number, pendingAfter: number | undefined): void;
}): Rounds {
  let stopped = false;
  let current: ConsumerMessages | undefined;
  const unfollow = whenLeaderElected(opts.nc, opts.stream, opts.durable, () => {
    if (!current) return;
    opts.log.info({ consumer: opts.durable }, 'consumer has a new leader: pulling from it');
    // What was received is still handed over; what was in flight comes again after the ack wait.
    current.stop();
  });
  const loop = (async () => {
    while (!stopped) {
      try {
        const iter = await opts.consumer.fetch({ max_messages: opts.maxMessages, expires: opts.expiresMs });
        current = iter;
        let delivered = 0;
        let pendingAfter: number | undefined;
        for await (const m of iter) {
          delivered++;
          pendingAfter = m.info.pending;
          opts.onMessage(m);
        }
        current = undefined;
        opts.onPulled?.(delivered, pendingAfter);
      } catch (err) {
        current = undefined;
        if (stopped) break;
        if (err instanceof Error && err.message === 'heartbeats missed') {
          opts.log.debug({ consumer: opts.durable }, 'pull ended without heartbeats; pulling again');
          continue;
        }
        opts.log.warn({ err, consumer: opts.durable }, 'pulling failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      // Still followed: a leader change ends the last round at once, as its pull died anyway.
      await loop;
      unfollow();
    },
  };
}
