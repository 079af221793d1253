import type { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import type { Sql } from '../platform/db/sql.ts';
import { offsetOf, type PageQuery } from '../platform/http/pagination.ts';

/** A delivery with its integration, as the delivery log shows it. */
export interface DeliveryRow {
  id: string;
  event_id: string;
  kind: string;
  message: string;
  subject: { type: string; id: string; name: string };
  integration_id: string;
  integration_name: string;
  integration_type: IntegrationType;
  status: 'pending' | 'sending' | 'delivered' | 'dead';
  attempts: number;
  last_error: string | null;
  next_attempt_at: string;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
  total?: number;
}

const columns = (sql: Sql) => sql`
  d.id, d.event_id, d.kind, d.payload->>'message' as message, d.payload->'subject' as subject,
  i.id as integration_id, i.name as integration_name, i.type as integration_type,
  d.status, d.attempts, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at, d.updated_at`;

export async function deliveriesOfIntegration(sql: Sql, integrationId: string, page: PageQuery) {
  const rows = await sql<DeliveryRow[]>`
    select ${columns(sql)}, count(*) over ()::int as total
    from deliveries d join integrations i on i.id = d.integration_id
    where d.integration_id = ${integrationId}
    order by d.created_at desc, d.id desc
    limit ${page.per_page} offset ${offsetOf(page)}`;
  const total =
    rows[0]?.total ?? (await sql<{ n: number }[]>`select count(*)::int as n from deliveries where integration_id = ${integrationId}`)[0]!.n;
  return { rows, total };
}

export async function deliveriesOfEvents(sql: Sql, eventIds: readonly string[]): Promise<DeliveryRow[]> {
  if (eventIds.length === 0) return [];
  return sql<DeliveryRow[]>`
    select ${columns(sql)}
    from deliveries d join integrations i on i.id = d.integration_id
    where d.event_id = any(${sql.array([...eventIds])}::uuid[])
    order by d.created_at, i.name, d.id`;
}
