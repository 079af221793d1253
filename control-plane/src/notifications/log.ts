import { z } from 'zod';
import { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import type { Sql } from '../platform/db/sql.ts';
import * as repo from './log-repo.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';

export const deliveryStatuses = ['pending', 'sending', 'delivered', 'dead'] as const;

export const DeliveryView = z
  .object({
    id: z.uuid().describe('Sent as Idempotency-Key (webhooks) or Message-ID (email) on every attempt.'),
    event_id: z.uuid(),
    event: z.string().describe('monitor.down, monitor.up, heartbeat.down, heartbeat.up, trigger.fired, integration.test'),
    message: z.string(),
    subject: z.object({ type: z.string(), id: z.uuid(), name: z.string() }),
    integration: z.object({ id: z.uuid(), name: z.string(), type: IntegrationType }),
    status: z
      .enum(deliveryStatuses)
      .describe('pending (waiting for its next attempt), sending, delivered, dead (gave up; see last_error).'),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable().describe('When a pending delivery is tried next; null otherwise.'),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Delivery' });
export type DeliveryView = z.infer<typeof DeliveryView>;

function toView(r: repo.DeliveryRow): DeliveryView {
  return {
    id: r.id,
    event_id: r.event_id,
    event: r.kind,
    message: r.message,
    subject: r.subject,
    integration: { id: r.integration_id, name: r.integration_name, type: r.integration_type },
    status: r.status,
    attempts: r.attempts,
    last_error: r.last_error,
    next_attempt_at: r.status === 'pending' ? formatTimestamp(r.next_attempt_at) : null,
    delivered_at: formatTimestamp(r.delivered_at),
    created_at: formatTimestamp(r.created_at),
    updated_at: formatTimestamp(r.updated_at),
  };
}

/** An integration's deliveries, newest first. */
export async function deliveriesOfIntegration(sql: Sql, integrationId: string, page: PageQuery) {
  const { rows, total } = await repo.deliveriesOfIntegration(sql, integrationId, page);
  return { items: rows.map(toView), total };
}

/** The deliveries of these events, grouped by event id. */
export async function deliveriesOfEvents(sql: Sql, eventIds: readonly string[]): Promise<Map<string, DeliveryView[]>> {
  const out = new Map<string, DeliveryView[]>();
  for (const r of await repo.deliveriesOfEvents(sql, eventIds)) {
    const list = out.get(r.event_id) ?? [];
    list.push(toView(r));
    out.set(r.event_id, list);
  }
  return out;
}
