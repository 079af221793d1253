import { randomBytes } from 'node:crypto';
import { keyFromText } from '../../shared/src/crypto.ts';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { sealSecrets, splitSettings } from '../../control-plane/src/notifications/integrations/config.ts';
import { insertIntegration } from '../../control-plane/src/notifications/integrations/repo.ts';
import { arrayLiteral, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts';
import { graceS, insertQuiet } from './misses-setup.ts';

/**
 * Projects of one organization, each with one active webhook integration (signed with a secret,
 * as the API would store it) pointing at the receiver, and `perProject` quiet heartbeats that
 * name no integration (so each alerts its project's integration). Returns the heartbeat ids in a
 * random order (by id), so each slice of them spans the projects and the ping partitions.
 */
export async function fillAlertProjects(
  sql: Sql,
  opts: { projects: number; perProject: number; receiverUrl: string; secretKey: string },
): Promise<{ projectIds: string[]; integrationIds: string[]; heartbeatIds: string[] }> {
  const user = await createUser(sql, { email: `alerts-${randomBytes(3).toString('hex')}@bench.test`, password: 'a long bench password' });
  const [{ organization_id: org }] = (await sql`select organization_id from projects where id = ${user.project_id}`) as unknown as [
    { organization_id: string },
  ];
  const projectIds = [user.project_id];
  for (let i = 1; i < opts.projects; i++) {
    const [row] =
      (await sql`insert into projects (organization_id, name) values (${org}, ${`bench project ${i}`}) returning id`) as unknown as [
        { id: string },
      ];
    projectIds.push(row.id);
  }
  const key = deriveKeys(keyFromText(opts.secretKey)).integrationSecrets;
  const integrationIds: string[] = [];
  for (const [i, projectId] of projectIds.entries()) {
    const { shown, secret } = splitSettings('webhook', {
      url: `${opts.receiverUrl}/hooks/${i}`,
      secret: randomBytes(24).toString('base64url'),
    });
    integrationIds.push(
      await insertIntegration(sql, projectId, {
        name: `receiver ${i}`,
        type: 'webhook',
        active: true,
        config: shown,
        secrets_sealed: sealSecrets(secret, key),
        template: null,
      }),
    );
    await insertQuiet(sql, projectId, opts.perProject);
  }
  const rows = (await sql`select id from heartbeats order by id`) as unknown as { id: string }[];
  return { projectIds, integrationIds, heartbeatIds: rows.map((r) => r.id) };
}

/**
 * Makes `ids` late the way an API update does (updated_at bumped, so the change trigger tells the
 * deadline role), their grace running out at `at` (ms since the epoch) plus up to `spreadMs`,
 * spread evenly. Returns when each one's grace runs out.
 */
export async function expireAt(sql: Sql, ids: readonly string[], at: number, spreadMs: number): Promise<Map<string, number>> {
  const due = new Map(ids.map((id, i) => [id, at + (spreadMs > 0 ? Math.floor((i * spreadMs) / ids.length) : 0)]));
  const rows = [...due].map(([id, ms]) => ({ id, next: new Date(ms - graceS * 1000).toISOString() }));
  for (let i = 0; i < rows.length; i += 5_000) {
    const chunk = rows.slice(i, i + 5_000);
    await sql`
      update heartbeats h set status = 'late', next_ping_at = v.next::timestamptz, updated_at = now()
      from unnest(${arrayLiteral(chunk.map((r) => r.id))}::uuid[], ${arrayLiteral(chunk.map((r) => r.next))}::text[]) as v(id, next)
      where h.id = v.id`;
  }
  return due;
}

/** What Postgres recorded of one run: the down events of these heartbeats and their deliveries, with the time of each step. */
export type Recorded = {
  heartbeat: string;
  event: string;
  occurredAt: number;
  /** Transaction start of the deadline role's write of the transition (and its outbox row). */
  recordedAt: number;
  delivery: string | null;
  /** Transaction start of the router's batch that made the delivery. */
  routedAt: number | null;
  /** Transaction start of the worker's record of the delivery. */
  deliveredAt: number | null;
  status: string | null;
}[];

export async function recorded(sql: Sql, heartbeatIds: readonly string[]): Promise<Recorded> {
  const rows = await sql<
    {
      heartbeat: string;
      event: string;
      occurred_at: string;
      recorded_at: number;
      delivery: string | null;
      routed_at: number | null;
      delivered_at: number | null;
      status: string | null;
    }[]
  >`
    select o.payload #>> '{subject,id}' as heartbeat, o.id as event, o.payload ->> 'occurred_at' as occurred_at,
      extract(epoch from o.created_at)::float8 * 1000 as recorded_at, d.id as delivery,
      extract(epoch from d.created_at)::float8 * 1000 as routed_at, extract(epoch from d.delivered_at)::float8 * 1000 as delivered_at,
      d.status
    from outbox_events o left join deliveries d on d.event_id = o.id
    where o.kind = 'heartbeat.down' and o.payload #>> '{subject,id}' = any(${arrayLiteral(heartbeatIds)}::text[])`;
  return rows.map((r) => ({
    heartbeat: r.heartbeat,
    event: r.event,
    occurredAt: Date.parse(r.occurred_at),
    recordedAt: r.recorded_at,
    delivery: r.delivery,
    routedAt: r.routed_at,
    deliveredAt: r.delivered_at,
    status: r.status,
  }));
}
