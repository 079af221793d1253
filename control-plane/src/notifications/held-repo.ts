import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';

/** An alert held because it occurred inside a maintenance window (migration 0017). */
export interface HeldAlert {
  event_id: string;
  project_id: string;
  subject_type: string;
  subject_id: string;
  payload: unknown;
  occurred_at: string;
  release_at: string;
}

/** Why an alert is held (ADR 0029, ADR 0030). */
export type HoldReason = 'maintenance' | 'dependency' | 'group' | 'snooze';

/** A dependency hold: the outage it joined (if any), and when it may stop waiting for a parent. */
export interface DependencyHold {
  parentId: string | null;
  parentIncidentId: string | null;
  settleUntil: Date;
}

/** Holds an alert; `releaseAt` null: until something else settles it (a joined parent's recovery). */
export async function insertHeld(
  tx: Db,
  e: DomainEvent,
  releaseAt: Date | null,
  reason: HoldReason = 'maintenance',
  dependency?: DependencyHold,
): Promise<void> {
  await tx`
    insert into held_alerts (event_id, project_id, subject_type, subject_id, kind, payload, occurred_at, release_at, reason,
      parent_id, parent_incident_id, settle_until)
    values (${e.id}, ${e.project_id}, ${e.subject.type}, ${e.subject.id}, ${e.kind}, ${tx.json(e as never)}, ${e.occurred_at},
      ${releaseAt ?? 'infinity'}, ${reason}, ${dependency?.parentId ?? null}, ${dependency?.parentIncidentId ?? null},
      ${dependency?.settleUntil ?? null})
    on conflict (event_id) do nothing`;
}

/** The projects among these with a down still unsent (held, or dropped and waiting for its up). */
export async function projectsWithUnsentDowns(db: Db, projectIds: readonly string[]): Promise<Set<string>> {
  if (projectIds.length === 0) return new Set();
  const rows = await db<{ project_id: string }[]>`
    select distinct project_id from held_alerts
    where status in ('held', 'dropped') and project_id = any(${arrayLiteral(projectIds)}::uuid[])`;
  return new Set(rows.map((r) => r.project_id));
}

/** The subject's downs that were never sent (held, or dropped at the window's end), which its next up settles. */
export async function unsentDowns(tx: Db, subjectId: string): Promise<string[]> {
  const rows = await tx<{ event_id: string }[]>`
    select event_id from held_alerts
    where subject_id = ${subjectId} and status in ('held', 'dropped') and kind like '%.down' for update`;
  return rows.map((r) => r.event_id);
}

/** These downs recovered without being sent: their up is dropped with them. */
export async function markRecovered(tx: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await tx`
    update held_alerts set status = 'recovered', decided_at = now()
    where event_id = any(${arrayLiteral(eventIds)}::uuid[]) and status in ('held', 'dropped')`;
}

/**
 * Whether an alert of the same subject recorded before this event still waits for a router (one
 * another router holds right now, say): an up is decided only once its down has been.
 */
export async function earlierAlertWaiting(tx: Db, e: DomainEvent, batch: readonly string[]): Promise<boolean> {
  const [row] = await tx<{ waiting: boolean }[]>`
    select exists (
      select 1 from outbox_events o
      where o.notified_at is null and o.payload #>> '{subject,id}' = ${e.subject.id}
        and o.id <> all(${arrayLiteral(batch)}::uuid[])
        and o.created_at < (select created_at from outbox_events where id = ${e.id})
    ) as waiting`;
  return row!.waiting;
}

/** Takes held alerts whose release time has come, for this transaction; rows another router holds are skipped. */
export async function claimDueHeld(tx: Db, now: Date, limit: number): Promise<HeldAlert[]> {
  return tx<HeldAlert[]>`
    select event_id, project_id, subject_type, subject_id::text, payload, occurred_at, release_at from held_alerts
    where status = 'held' and reason in ('maintenance', 'snooze') and release_at <= ${now}
    order by release_at
    limit ${limit}
    for update skip locked`;
}

/**
 * Whether the subject of a held down is still down: the monitor's incident is still open, or the
 * heartbeat is down and has not come up since the down occurred.
 */
export async function stillDown(tx: Db, h: Pick<HeldAlert, 'subject_type' | 'subject_id' | 'payload' | 'occurred_at'>): Promise<boolean> {
  const data = ((h.payload as DomainEvent).data ?? {}) as Record<string, unknown>;
  if (h.subject_type === 'monitor') {
    const incident = typeof data.incident_id === 'string' ? data.incident_id : null;
    const [row] = incident
      ? await tx<{ down: boolean }[]>`select exists (select 1 from incidents where id = ${incident} and ended_at is null) as down`
      : await tx<{ down: boolean }[]>`select exists (select 1 from monitors where id = ${h.subject_id} and status = 2 and active) as down`;
    return row!.down;
  }
  const [row] = await tx<{ down: boolean }[]>`
    select exists (select 1 from heartbeats where id = ${h.subject_id} and status = 'down')
      and not exists (
        select 1 from outbox_events
        where kind = 'heartbeat.up' and payload #>> '{subject,id}' = ${h.subject_id}
          and (payload ->> 'occurred_at')::timestamptz > ${h.occurred_at}::timestamptz
      ) as down`;
  return row!.down;
}

/** Settles a held row (conditional: only one router ever settles it). Whether this call did. */
export async function settleHeld(tx: Db, eventId: string, status: 'released' | 'dropped'): Promise<boolean> {
  const rows =
    await tx`update held_alerts set status = ${status}, decided_at = now() where event_id = ${eventId} and status = 'held' returning 1`;
  return rows.length > 0;
}

export async function postponeHeld(tx: Db, eventId: string, until: Date): Promise<void> {
  await tx`update held_alerts set release_at = ${until} where event_id = ${eventId} and status = 'held'`;
}

/** A held dependent down with what its dependency rule reads. */
export interface HeldDependent extends HeldAlert {
  parent_id: string | null;
  parent_incident_id: string | null;
  settle_until: string;
}

/**
 * Takes the dependency holds to judge again now: those whose wait ran out, and those whose
 * joined parent is no longer down (its incident ended; a heartbeat parent no longer down) and
 * that have not been given a time to look again yet.
 */
export async function claimDependents(tx: Db, now: Date, limit: number): Promise<HeldDependent[]> {
  return tx<HeldDependent[]>`
    select h.event_id, h.project_id, h.subject_type, h.subject_id::text, h.payload, h.occurred_at, h.release_at,
      h.parent_id::text, h.parent_incident_id::text, h.settle_until
    from held_alerts h
    where h.status = 'held' and h.reason = 'dependency' and (
      h.release_at <= ${now}
      -- Joined and waiting on the parent only (no time set): the parent is up again.
      or (h.release_at = 'infinity' and h.parent_incident_id is not null
          and exists (select 1 from incidents i where i.id = h.parent_incident_id and i.ended_at is not null))
      or (h.release_at = 'infinity' and h.parent_incident_id is null and h.parent_id is not null
          and not exists (select 1 from heartbeats hb where hb.id = h.parent_id and hb.status = 'down' and hb.active)))
    order by h.occurred_at
    limit ${limit}
    for update of h skip locked`;
}

/** A dependent's down joins a parent's outage (again, or another's): it waits for that parent. */
export async function joinParent(tx: Db, eventId: string, parentId: string, parentIncidentId: string | null): Promise<void> {
  await tx`
    update held_alerts set parent_id = ${parentId}, parent_incident_id = ${parentIncidentId}, release_at = 'infinity'
    where event_id = ${eventId} and status = 'held'`;
}

/** The dependent downs that joined these incidents (the parents' outages), oldest first. */
export async function dependentsOf(db: Db, incidentIds: readonly string[]) {
  if (incidentIds.length === 0) return [];
  return db<
    {
      parent_incident_id: string;
      event_id: string;
      subject_type: string;
      subject_id: string;
      name: string;
      occurred_at: string;
      status: string;
    }[]
  >`
    select parent_incident_id::text, event_id, subject_type, subject_id::text, payload #>> '{subject,name}' as name, occurred_at, status
    from held_alerts
    where parent_incident_id = any(${arrayLiteral(incidentIds)}::uuid[]) and reason = 'dependency'
    order by occurred_at, subject_id`;
}

/** The release times of a project's open groups of one kind of alert. */
export async function openGroupReleases(tx: Db, projectId: string, kind: string): Promise<number[]> {
  const rows = await tx<{ release_at: Date }[]>`
    select distinct release_at from held_alerts
    where status = 'held' and reason = 'group' and project_id = ${projectId} and kind = ${kind}`;
  return rows.map((r) => new Date(r.release_at).getTime());
}

/**
 * Takes every held grouped alert whose group's window has ended (a group is taken whole: its
 * rows share project, kind and release time, and are all due at once).
 */
export async function claimDueGroups(tx: Db, now: Date): Promise<(HeldAlert & { kind: string })[]> {
  return tx<(HeldAlert & { kind: string })[]>`
    select event_id, project_id, subject_type, subject_id::text, kind, payload, occurred_at, release_at from held_alerts
    where status = 'held' and reason = 'group' and release_at <= ${now}
    order by release_at, project_id, occurred_at
    limit 10000
    for update skip locked`;
}

/**
 * Deletes up to `limit` held alerts settled before `cutoff` (retention): released, recovered or
 * dropped, never one still held. A parent's incident lists its dependents from these rows, so
 * they go with the rest of the history.
 */
export async function pruneSettledHolds(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from held_alerts where event_id = any(array(
      select event_id from held_alerts where status <> 'held' and coalesce(decided_at, created_at) < ${cutoff} limit ${limit}))`;
  return count;
}
