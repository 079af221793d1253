import type { IntegrationType, Notification } from '../../../shared/src/contracts/notify.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';
import type { MessageTemplate } from './templates.ts';

export interface NewDelivery {
  event_id: string;
  integration_id: string;
  project_id: string;
  trigger_id: string | null;
  kind: string;
  payload: Notification;
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
 * integrations when it names some, else every integration of the project but its escalation
 * ones; active ones only in both cases. One row per (event, integration), in the events' order.
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
    join integrations i on i.project_id = e.project_id and i.active and (
      i.id = any(linked.ids)
      -- Naming none: every integration of the project but those kept for escalations (ADR 0032).
      or (cardinality(linked.ids) = 0
        and not exists (select 1 from escalation_integrations x where x.project_id = e.project_id and x.integration_id = i.id)))
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

/**
 * Takes the oldest alert events still waiting for their deliveries, for this transaction: rows
 * another router holds are skipped, so routers share the backlog without waiting on each other,
 * and a router that dies mid-way leaves its rows to the next. `skip`: events whose routing failed
 * a moment ago, left for a later look.
 */
export async function claimAlerts(tx: Db, limit: number, skip: readonly string[] = []): Promise<{ id: string; payload: unknown }[]> {
  return tx<{ id: string; payload: unknown }[]>`
    select id, payload from outbox_events
    where notified_at is null ${skip.length > 0 ? tx`and id <> all(${arrayLiteral(skip)}::uuid[])` : tx``}
    order by created_at
    limit ${limit}
    for update skip locked`;
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
  /** The integration's run of failed attempts when this was claimed (0: it delivers). */
  integration_failures: number;
  template: MessageTemplate | null;
}

/**
 * Takes up to `limit` deliveries for one attempt each: pending ones that are due, and ones whose
 * claim ran out (their worker died while sending), oldest first. Rows other workers are taking
 * are skipped; a taken row is `sending` until `leaseMs` from now, so no other worker takes it
 * again meanwhile, and a delivered or dead one is never taken.
 */
export async function claimDue(sql: Sql, limit: number, leaseMs: number): Promise<Claimed[]> {
  // The oldest due rows are found by walking deliveries_relay_idx in next_attempt_at order and
  // stopping after `limit`. Left to itself, the planner expects few rows there (the statistics
  // see the queue as it usually is: nearly empty), and at times chooses to read every pending row
  // of the index, sort them all and keep `limit`: each claim then costs the whole backlog, and a
  // burst of 10,000 deliveries (some 600 claims) cost Postgres seconds of CPU (docs/benchmarks.md,
  // alerts). The two settings take those plans away for this transaction only; the set_config
  // call is sent with the claim, so the transaction adds a BEGIN and a COMMIT, not a round trip each.
  return sql
    .begin((tx) => [
      tx`select set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`,
      tx<Claimed[]>`
    update deliveries d set status = 'sending', attempts = d.attempts + 1, updated_at = now(),
      claimed_until = now() + ${leaseMs} * interval '1 millisecond'
    from (
      select id from deliveries
      where (status = 'pending' and next_attempt_at <= now()) or (status = 'sending' and claimed_until < now())
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    ) due, integrations i
    where d.id = due.id and i.id = d.integration_id
    returning d.id, d.attempts, d.payload, d.integration_id, i.name as integration_name, i.type as integration_type,
      i.active as integration_active, i.config, i.secrets_sealed, i.failures as integration_failures, i.template`,
    ])
    .then(([, claimed]) => claimed as Claimed[]);
}

/**
 * Records sent deliveries, any number in one statement (the worker batches them: group-commit.ts).
 * last_error stays: a delivery that needed retries shows what went wrong before.
 */
export async function markDelivered(sql: Sql, ids: readonly string[]): Promise<void> {
  await sql`
    update deliveries set status = 'delivered', delivered_at = now(), claimed_until = null, updated_at = now()
    where id = any(${arrayLiteral(ids)}::uuid[]) and status = 'sending'`;
}

/** Records one sent delivery in the caller's transaction; whether this call did (not already recorded). */
export async function markDeliveredOne(db: Db, id: string): Promise<boolean> {
  const rows = await db`
    update deliveries set status = 'delivered', delivered_at = now(), claimed_until = null, updated_at = now()
    where id = ${id} and status = 'sending' returning 1`;
  return rows.length > 0;
}

export async function markRetry(sql: Db, id: string, attempt: number, error: string, delayMs: number): Promise<boolean> {
  const rows = await sql`
    update deliveries set status = 'pending', last_error = ${error}, claimed_until = null, updated_at = now(),
      next_attempt_at = now() + ${delayMs} * interval '1 millisecond'
    where id = ${id} and status = 'sending' and attempts = ${attempt} returning 1`;
  return rows.length > 0;
}

export async function markDead(sql: Db, id: string, attempt: number, error: string): Promise<boolean> {
  const rows = await sql`
    update deliveries set status = 'dead', last_error = ${error}, claimed_until = null, updated_at = now()
    where id = ${id} and status = 'sending' and attempts = ${attempt} returning 1`;
  return rows.length > 0;
}

/** A test send, recorded in the integration's delivery log like any other attempt. */
export async function recordTestDelivery(
  sql: Sql,
  d: { id: string; integration_id: string; project_id: string; payload: Notification; error: string | null },
): Promise<void> {
  await sql`
    insert into deliveries (id, event_id, integration_id, project_id, kind, payload, status, attempts, last_error, delivered_at)
    values (${d.id}, ${d.payload.id}, ${d.integration_id}, ${d.project_id}, ${d.payload.event}, ${sql.json(d.payload as never)},
      ${d.error === null ? 'delivered' : 'dead'}, 1, ${d.error}, ${d.error === null ? sql`now()` : null})`;
}

/** Deletes up to `limit` delivered or dead deliveries made before `cutoff` (retention); never one still to be sent. */
export async function pruneFinishedDeliveries(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from deliveries where ctid = any(array(
      select ctid from deliveries where created_at < ${cutoff} and status in ('delivered', 'dead') limit ${limit}))`;
  return count;
}
