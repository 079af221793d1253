import type { Status } from '@nats-io/transport-node';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Presence } from '../peers/presence.ts';
import type { ResultPublisher } from '../results/publisher.ts';

/**
 * What JetStream announces when a stream gets a leader. Any stream's election wakes a blocked
 * publisher: the agent need not know which stream stores its subjects (the central RESULTS or a
 * regional one), and a retry that finds nothing to send costs nothing.
 */
const streamLeaderElected = '$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.>';

export type Stoppable = { stop(): void };

/** While NATS is away no peer expires and results are held; once it is back both resume. */
export function followConnection(
  nc: NatsConnection,
  to: { presence: Pick<Presence, 'setConnected'>; publisher: Pick<ResultPublisher, 'pause' | 'resume'> },
): Stoppable {
  // nats.js v3 hands out a QueuedIterator, whose stop() unregisters it from a shared connection.
  const status: AsyncIterable<Status> & { stop?: () => void } = nc.status();
  void (async () => {
    for await (const s of status) {
      if (s.type === 'disconnect') {
        to.presence.setConnected(false);
        to.publisher.pause();
      } else if (s.type === 'reconnect') {
        to.presence.setConnected(true);
        to.publisher.resume();
      }
    }
  })();
  return { stop: () => status.stop?.() };
}

/**
 * Without it, results wait after an election for what is in flight to time out and for the rest
 * of the back-off: up to 3 s.
 */
export function retryOnStreamElection(nc: NatsConnection, publisher: Pick<ResultPublisher, 'retryNow'>): Stoppable {
  const sub = nc.subscribe(streamLeaderElected, { callback: () => publisher.retryNow() });
  return { stop: () => sub.unsubscribe() };
}
