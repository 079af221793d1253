import type { IntegrationType, Notification } from '../../../shared/src/contracts/notify.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';

export interface NewDelivery {
  event_id: string;
  integration_id: string;
  project_id: string;
  trigger_id: string | null;
  kind: string;
  payload: Notification;
}

export interface QueuedDelivery {
  id: string;
  integration_id: string;
  type: IntegrationType;
  attempts: number;
  /** When its last message was published (microseconds since the epoch); null when none was. */
  queued_us: string | null;
}

/** Inserts deliveries; a pair (event, integration) that already has one is skipped, so a replayed event adds nothing. */
export async function insertDeliveries(
  tx: Db,
  rows: readonly NewDelivery[],
): Promise<{ id: string; event_id: string; integration_id: string }[]> {
  const out: { id: string; event_id: string; integration_id: string }[] = [];
  // Six parameters a row, within the protocol's 65,535 per statement.
  for (let at = 0; at < rows.length; at += 5_000) {
    const chunk = rows.slice(at, at + 5_000);
    out.push(
      ...(await tx<{ id: string; event_id: string; integration_id: string }[]>`
        insert into deliveries ${tx(chunk.map((r) => ({ ...r, payload: tx.json(r.payload as never) })))}
        on conflict (event_id, integration_id) do nothing
        returning id, event_id, integration_id`),
    );
  }
  return out;
}

/**
 * Who hears about each of these events of monitors and heartbeats: the resource's own
 * integrations when it names some, else every integration of the project; active ones only in
 * both cases. One row per (event, integration), in the events' order.
 */
export async function recipientsOf(db: Db, events: readonly { id: string; project_id: string; subject: { type: string; id: string } }[]) {
  if (events.length === 0) return [];
  return db<{ event_id: string; id: string; type: IntegrationType }[]>`
    select e.event_id, i.id, i.type
    from unnest(${arrayLiteral(events.map((e) => e.id))}::uuid[], ${arrayLiteral(events.map((e) => e.project_id))}::uuid[],
      ${arrayLiteral(events.map((e) => e.subject.type))}::text[], ${arrayLiteral(events.map((e) => e.subject.id))}::uuid[])
      with ordinality as e(event_id, project_id, subject_type, subject_id, ord)
    cross join lateral (
      select array(
        select integration_id from monitor_integrations where e.subject_type = 'monitor' and monitor_id = e.subject_id
        union
        select integration_id from heartbeat_integrations where e.subject_type = 'heartbeat' and heartbeat_id = e.subject_id
      ) as ids
    ) linked
    join integrations i on i.project_id = e.project_id and i.active and (cardinality(linked.ids) = 0 or i.id = any(linked.ids))
    order by e.ord, i.created_at, i.id`;
}

/** The names of these projects, by id; a deleted project is absent. */
export async function projectNames(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db<{ id: string; name: string }[]>`select id, name from projects where id = any(${arrayLiteral(ids)}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** These events' deliveries are made (in their transaction): the event relay leaves them alone. */
export async function markNotified(db: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db`update outbox_events set notified_at = now() where id = any(${arrayLiteral(eventIds)}::uuid[]) and notified_at is null`;
}

/** Alert events published at least `lostAfterMs` ago, within the last day, whose deliveries were never made. */
export async function unnotifiedEvents(sql: Sql, lostAfterMs: number, limit = 200): Promise<{ id: string; payload: unknown }[]> {
  return sql<{ id: string; payload: unknown }[]>`
    select id, payload from outbox_events
    where notified_at is null and created_at > now() - interval '1 day'
      and published_at < now() - ${lostAfterMs} * interval '1 millisecond'
    order by created_at
    limit ${limit}`;
}

export async function markQueued(sql: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`update deliveries set queued_at = now() where id = any(${sql.array([...ids])}::uuid[])`;
}

/**
 * Deliveries whose NOTIFY message may not exist: never published (a crash after the commit), or
 * overdue by `lostAfterMs` (a message lost with a stream, or a worker that died holding a claim).
 */
export async function unqueued(sql: Sql, lostAfterMs: number, limit = 500): Promise<QueuedDelivery[]> {
  return sql<QueuedDelivery[]>`
    select d.id, d.integration_id, i.type, d.attempts, (extract(epoch from d.queued_at) * 1000000)::bigint::text as queued_us
    from deliveries d join integrations i on i.id = d.integration_id
    where (d.status = 'pending' and (d.queued_at is null or d.next_attempt_at < now() - ${lostAfterMs} * interval '1 millisecond'))
       or (d.status = 'sending' and d.claimed_until < now() - ${lostAfterMs} * interval '1 millisecond')
    order by d.next_attempt_at
    limit ${limit}`;
}

/** The message of a rescued delivery goes out again; its schedule moves so it is not rescued twice at once. */
export async function requeued(sql: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update deliveries set queued_at = now(), next_attempt_at = greatest(next_attempt_at, now()),
      claimed_until = case when status = 'sending' then now() else claimed_until end
    where id = any(${sql.array([...ids])}::uuid[])`;
}

export interface Claimed {
  id: string;
  attempts: number;
  payload: Notification;
  integration_id: string;
  integration_name: string;
  integration_type: IntegrationType;
  integration_active: boolean;
  config: Record<string, unknown>;
  secrets_sealed: string | null;
}

export type Claim = { kind: 'claimed'; delivery: Claimed } | { kind: 'settled' } | { kind: 'wait'; ms: number };

/**
 * Takes a delivery for one attempt with a conditional update: only a pending delivery that is due,
 * or one whose previous claim ran out (its worker died), can be taken. A delivered or dead one is
 * settled: its message is acknowledged without sending again.
 */
export async function claim(sql: Sql, id: string, leaseMs: number): Promise<Claim> {
  const [row] = await sql<Claimed[]>`
    update deliveries d set status = 'sending', attempts = d.attempts + 1, updated_at = now(),
      claimed_until = now() + ${leaseMs} * interval '1 millisecond'
    from integrations i
    where d.id = ${id} and i.id = d.integration_id
      and ((d.status = 'pending' and d.next_attempt_at <= now()) or (d.status = 'sending' and d.claimed_until < now()))
    returning d.id, d.attempts, d.payload, d.integration_id, i.name as integration_name, i.type as integration_type,
      i.active as integration_active, i.config, i.secrets_sealed`;
  if (row) return { kind: 'claimed', delivery: row };
  const [state] = await sql<{ status: string; wait_ms: number }[]>`
    select status, greatest(0, ceil(extract(epoch from (
      case when status = 'sending' then claimed_until else next_attempt_at end - now())) * 1000))::int as wait_ms
    from deliveries where id = ${id}`;
  if (!state || state.status === 'delivered' || state.status === 'dead') return { kind: 'settled' };
  return { kind: 'wait', ms: state.wait_ms };
}

/** last_error stays: a delivery that needed retries shows what went wrong before. */
export async function markDelivered(sql: Sql, id: string): Promise<void> {
  await sql`
    update deliveries set status = 'delivered', delivered_at = now(), claimed_until = null, updated_at = now()
    where id = ${id} and status = 'sending'`;
}

export async function markRetry(sql: Sql, id: string, attempt: number, error: string, delayMs: number): Promise<void> {
  await sql`
    update deliveries set status = 'pending', last_error = ${error}, claimed_until = null, updated_at = now(),
      next_attempt_at = now() + ${delayMs} * interval '1 millisecond'
    where id = ${id} and status = 'sending' and attempts = ${attempt}`;
}

export async function markDead(sql: Sql, id: string, attempt: number, error: string): Promise<void> {
  await sql`
    update deliveries set status = 'dead', last_error = ${error}, claimed_until = null, updated_at = now()
    where id = ${id} and status = 'sending' and attempts = ${attempt}`;
}

/** A test send, recorded in the integration's delivery log like any other attempt. */
export async function recordTestDelivery(
  sql: Sql,
  d: { id: string; integration_id: string; project_id: string; payload: Notification; error: string | null },
): Promise<void> {
  await sql`
    insert into deliveries (id, event_id, integration_id, project_id, kind, payload, status, attempts, last_error, delivered_at, queued_at)
    values (${d.id}, ${d.payload.id}, ${d.integration_id}, ${d.project_id}, ${d.payload.event}, ${sql.json(d.payload as never)},
      ${d.error === null ? 'delivered' : 'dead'}, 1, ${d.error}, ${d.error === null ? sql`now()` : null}, now())`;
}
