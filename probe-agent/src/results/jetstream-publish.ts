import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { PublishFn } from './send-window.ts';

// Short enough that a publish lost with a dead stream leader is retried soon after the new leader
// is up (elections take 4-9 s); a retry keeps its msg id, so a slow ack never doubles a result.
const publishTimeoutMs = 2_000;

/** Publishes to JetStream, resolving on the stream's ack. */
export function jetStreamPublish(nc: NatsConnection): PublishFn {
  const js = jetstream(nc);
  return async (subject, payload, msgId) => {
    const ack = await js.publish(subject, payload, { msgID: msgId, timeout: publishTimeoutMs });
    return { duplicate: ack.duplicate };
  };
}
