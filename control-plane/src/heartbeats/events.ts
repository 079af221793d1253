import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Ping } from '../../../shared/src/contracts/pings.ts';
import { toIso } from './record.ts';
import type { HeartbeatEvent, HeartbeatState } from './state.ts';

export interface EventSubject {
  id: string;
  project_id: string;
  name: string;
}

/**
 * The EVENTS message of a transition. `occurred_at` is the rules' logical instant (the ping, or
 * the deadline that was crossed), so the event says when it happened, not when it was noticed.
 */
export function heartbeatEvent(
  hb: EventSubject,
  event: HeartbeatEvent,
  before: HeartbeatState,
  after: HeartbeatState,
  ping?: Pick<Ping, 'kind' | 'exit_code' | 'region'> & { rid?: string; run_duration_seconds?: number },
): Omit<DomainEvent, 'id'> {
  const downSince = before.down_since ?? (event.type === 'heartbeat.down' ? event.at : null);
  return {
    kind: event.type,
    occurred_at: event.at.toISOString(),
    project_id: hb.project_id,
    subject: { type: 'heartbeat', id: hb.id, name: hb.name },
    data: {
      reason: event.reason,
      status: after.status,
      next_ping_at: toIso(after.next_ping_at),
      last_ping_at: toIso(after.last_ping_at),
      grace_period: after.grace_period,
      ...(event.type === 'heartbeat.down' || event.type === 'heartbeat.up' ? { down_since: toIso(downSince) } : {}),
      ...(event.type === 'heartbeat.up' && downSince
        ? { duration_seconds: Math.max(0, Math.floor((event.at.getTime() - downSince.getTime()) / 1000)) }
        : {}),
      ...(ping ? { ping } : {}),
    },
  };
}
