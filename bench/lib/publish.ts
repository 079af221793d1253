import { performance } from 'node:perf_hooks';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import type { Ping } from '../../shared/src/contracts/pings.ts';

export type Publication = { subject: string; payload: string | Uint8Array; msgId?: string };

/**
 * Publishes `count` messages with at most `window` acks outstanding (the way the agent's result
 * publisher works) and resolves when every ack arrived, with each ack's latency.
 */
export async function publishWindowed(
  nc: NatsConnection,
  count: number,
  make: (i: number) => Publication,
  window: number,
  deadlineMs = 120_000,
): Promise<{ acked: number; failed: number; wallMs: number; ackMs: Float64Array }> {
  const js = jetstream(nc);
  const ackMs = new Float64Array(count);
  let next = 0;
  let acked = 0;
  let failed = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < count && performance.now() - t0 < deadlineMs) {
      const i = next++;
      const m = make(i);
      const sent = performance.now();
      try {
        await js.publish(m.subject, m.payload, m.msgId ? { msgID: m.msgId, timeout: 10_000 } : { timeout: 10_000 });
        ackMs[i] = performance.now() - sent;
        acked++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  return { acked, failed, wallMs: performance.now() - t0, ackMs: ackMs.subarray(0, next) };
}

/** A success ping of this heartbeat as an edge publishes one (GET, no body), received now. */
export function successPing(heartbeatId: string, userAgent = 'curl/8.5.0'): Ping {
  return {
    id: randomUUID(),
    heartbeat_id: heartbeatId,
    kind: 'success',
    exit_code: null,
    received_at: new Date().toISOString(),
    region: null,
    method: 'GET',
    source: '127.0.0.1',
    user_agent: userAgent,
    body: '',
    body_size: 0,
  };
}
