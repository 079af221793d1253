import { randomUUID } from 'node:crypto';
import type { Ping } from '../../shared/src/contracts/pings.ts';

/** A ping as a ping edge publishes it to PINGS: a plain GET success from 127.0.0.1, now, unless `over` says otherwise. */
export function edgePing(heartbeatId: string, over: Partial<Ping> = {}): Ping {
  return {
    id: randomUUID(),
    heartbeat_id: heartbeatId,
    kind: 'success',
    exit_code: null,
    received_at: new Date().toISOString(),
    region: null,
    method: 'GET',
    source: '127.0.0.1',
    user_agent: null,
    body: '',
    body_size: 0,
    ...over,
  };
}
