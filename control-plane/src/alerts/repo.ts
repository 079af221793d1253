import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { arrayLiteral, type Db } from '../platform/db/sql.ts';

/** The events that open an alert: a down as it is sent, or a flapping monitor that settled down. */
export function opensAlert(e: Pick<DomainEvent, 'kind' | 'data'>): boolean {
  return e.kind === 'monitor.down' || e.kind === 'heartbeat.down' || (e.kind === 'monitor.settled' && e.data.status === 'down');
}

/** The events that resolve a subject's open alerts. */
export function resolvesAlert(e: Pick<DomainEvent, 'kind' | 'data'>): boolean {
  return e.kind === 'monitor.up' || e.kind === 'heartbeat.up' || (e.kind === 'monitor.settled' && e.data.status === 'up');
}

/**
 * Opens an alert per event (its id is the event's), in the transaction that makes the event's
 * deliveries, so that the alert exists before any message names it; a repeat adds nothing. Alerts
 * of projects with a response policy are looked at by the escalation pass from the start.
 */
export async function openAlerts(tx: Db, events: readonly DomainEvent[]): Promise<void> {
  const opening = events.filter(opensAlert);
  if (opening.length === 0) return;
  const rows = opening.map((e) => ({
    id: e.id,
    project_id: e.project_id,
    monitor_id: e.subject.type === 'monitor' ? e.subject.id : null,
    heartbeat_id: e.subject.type === 'heartbeat' ? e.subject.id : null,
    incident_id: typeof e.data.incident_id === 'string' ? e.data.incident_id : null,
    opening: e,
    opened_at: e.occurred_at,
  }));
  await tx`
    insert into alerts (id, project_id, monitor_id, heartbeat_id, incident_id, opening, opened_at, renotify_anchor, next_step_at)
    select r.id, r.project_id, r.monitor_id, r.heartbeat_id, r.incident_id, r.opening, r.opened_at, r.opened_at,
      case when p.renotify_minutes is not null or p.escalate_after_minutes is not null then r.opened_at end
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as r(id uuid, project_id uuid, monitor_id uuid, heartbeat_id uuid,
      incident_id uuid, opening jsonb, opened_at timestamptz)
    join projects p on p.id = r.project_id
    where exists (select 1 from monitors where id = r.monitor_id) or exists (select 1 from heartbeats where id = r.heartbeat_id)
    on conflict (id) do nothing`;
}

/** An up resolves its subject's alerts opened before it. */
export async function resolveAlerts(tx: Db, events: readonly DomainEvent[]): Promise<void> {
  const ups = events.filter(resolvesAlert);
  if (ups.length === 0) return;
  await tx`
    update alerts a set resolved_at = u.at, next_step_at = null
    from unnest(${arrayLiteral(ups.map((e) => e.subject.id))}::uuid[], ${arrayLiteral(ups.map((e) => e.occurred_at))}::timestamptz[]) as u(subject_id, at)
    where a.subject_id = u.subject_id and a.resolved_at is null and a.opened_at <= u.at`;
}

export interface AlertRow {
  id: string;
  project_id: string;
  monitor_id: string | null;
  heartbeat_id: string | null;
  incident_id: string | null;
  opening: DomainEvent;
  opened_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  snoozed_until: string | null;
  snoozed_by: string | null;
  resolved_at: string | null;
  renotified: number;
  renotify_anchor: string;
  escalated_at: string | null;
  next_step_at: string | null;
  /** The subject's current name and its own snooze. */
  subject_name: string;
  subject_snoozed_until: string | null;
}

const columns = (db: Db) => db`
  a.id, a.project_id, a.monitor_id, a.heartbeat_id, a.incident_id, a.opening, a.opened_at, a.acknowledged_at, a.acknowledged_by,
  a.snoozed_until, a.snoozed_by, a.resolved_at, a.renotified, a.renotify_anchor, a.escalated_at, a.next_step_at,
  coalesce(m.name, h.name) as subject_name, coalesce(m.snoozed_until, h.snoozed_until) as subject_snoozed_until`;

const subjects = (db: Db) => db`left join monitors m on m.id = a.monitor_id left join heartbeats h on h.id = a.heartbeat_id`;

export async function findAlert(
  db: Db,
  id: string,
  projectIds: readonly string[],
  opts: { lock?: boolean } = {},
): Promise<AlertRow | undefined> {
  const [row] = await db<AlertRow[]>`
    select ${columns(db)} from alerts a ${subjects(db)}
    where a.id = ${id} and a.project_id = any(${arrayLiteral(projectIds)}::uuid[])
    ${opts.lock ? db`for update of a` : db``}`;
  return row;
}

export interface AlertFilter {
  projectIds: readonly string[];
  status?: 'open' | 'acknowledged' | 'resolved' | 'unacknowledged' | undefined;
  monitorId?: string | undefined;
  heartbeatId?: string | undefined;
}

export async function listAlerts(
  db: Db,
  f: AlertFilter,
  page: { limit: number; offset: number },
): Promise<{ items: AlertRow[]; total: number }> {
  const where = db`
    a.project_id = any(${arrayLiteral(f.projectIds)}::uuid[])
    ${f.monitorId ? db`and a.monitor_id = ${f.monitorId}` : db``}
    ${f.heartbeatId ? db`and a.heartbeat_id = ${f.heartbeatId}` : db``}
    ${
      f.status === 'open'
        ? db`and a.resolved_at is null`
        : f.status === 'unacknowledged'
          ? db`and a.resolved_at is null and a.acknowledged_at is null`
          : f.status === 'acknowledged'
            ? db`and a.acknowledged_at is not null`
            : f.status === 'resolved'
              ? db`and a.resolved_at is not null`
              : db``
    }`;
  const [items, [count]] = await Promise.all([
    db<AlertRow[]>`
      select ${columns(db)} from alerts a ${subjects(db)} where ${where}
      order by (a.resolved_at is null) desc, a.opened_at desc, a.id limit ${page.limit} offset ${page.offset}`,
    db<{ n: number }[]>`select count(*)::int as n from alerts a where ${where}`,
  ]);
  return { items, total: count!.n };
}

/** The open alerts of these subjects (a monitor's or heartbeat's page). */
export async function openAlertsOf(db: Db, subjectIds: readonly string[]): Promise<AlertRow[]> {
  if (subjectIds.length === 0) return [];
  return db<AlertRow[]>`
    select ${columns(db)} from alerts a ${subjects(db)}
    where a.subject_id = any(${arrayLiteral(subjectIds)}::uuid[]) and a.resolved_at is null
    order by a.opened_at desc`;
}

export interface DueAlert extends AlertRow {
  renotify_minutes: number | null;
  escalate_after_minutes: number | null;
  escalation_targets: number;
}

/** Alerts whose step is due, for this transaction; rows another router holds are skipped. */
export async function claimDueAlerts(tx: Db, now: Date, limit: number): Promise<DueAlert[]> {
  return tx<DueAlert[]>`
    select ${columns(tx)}, p.renotify_minutes, p.escalate_after_minutes,
      (select count(*)::int from escalation_integrations e join integrations i on i.id = e.integration_id and i.active
        where e.project_id = a.project_id) as escalation_targets
    from alerts a join projects p on p.id = a.project_id ${subjects(tx)}
    where a.next_step_at <= ${now}
    order by a.next_step_at
    limit ${limit}
    for update of a skip locked`;
}

export async function scheduleNext(tx: Db, id: string, next: Date | null): Promise<void> {
  await tx`update alerts set next_step_at = ${next} where id = ${id}`;
}

export async function markEscalated(tx: Db, id: string, at: Date, next: Date | null): Promise<boolean> {
  const rows =
    await tx`update alerts set escalated_at = ${at}, next_step_at = ${next} where id = ${id} and escalated_at is null returning 1`;
  return rows.length > 0;
}

export async function markRenotified(tx: Db, id: string, count: number, anchor: Date, next: Date | null): Promise<boolean> {
  const rows = await tx`
    update alerts set renotified = ${count}, renotify_anchor = ${anchor}, next_step_at = ${next}
    where id = ${id} and renotified = ${count - 1} returning 1`;
  return rows.length > 0;
}

export async function markResolved(tx: Db, id: string, at: Date): Promise<void> {
  await tx`update alerts set resolved_at = ${at}, next_step_at = null where id = ${id} and resolved_at is null`;
}

/** Acknowledges an open alert; false when it was already acknowledged (or is resolved). */
export async function markAcknowledged(tx: Db, id: string, at: Date, by: string): Promise<boolean> {
  const rows = await tx`
    update alerts set acknowledged_at = ${at}, acknowledged_by = ${by}, next_step_at = null
    where id = ${id} and acknowledged_at is null and resolved_at is null returning 1`;
  return rows.length > 0;
}

/** Snoozes an open alert until `until`; the escalation pass looks at it again at once (it then waits for the snooze). */
export async function markSnoozed(tx: Db, id: string, until: Date, by: string): Promise<void> {
  await tx`
    update alerts set snoozed_until = ${until}, snoozed_by = ${by}, next_step_at = case when next_step_at is not null then now() end
    where id = ${id}`;
}

/** The escalation pass looks again at these subjects' (or a project's) open alerts: their snooze or policy changed. */
export async function reconsider(tx: Db, where: { subjectId?: string; projectId?: string }): Promise<void> {
  await tx`
    update alerts a set next_step_at = now()
    from projects p
    where p.id = a.project_id and a.resolved_at is null and a.acknowledged_at is null
      and (p.renotify_minutes is not null or p.escalate_after_minutes is not null)
      ${where.subjectId ? tx`and a.subject_id = ${where.subjectId}` : tx``}
      ${where.projectId ? tx`and a.project_id = ${where.projectId}` : tx``}`;
  if (where.projectId) {
    // A policy switched off: nothing is left to do for these.
    await tx`
      update alerts a set next_step_at = null from projects p
      where p.id = a.project_id and a.project_id = ${where.projectId} and a.next_step_at is not null
        and p.renotify_minutes is null and p.escalate_after_minutes is null`;
  }
}

/** The active escalation integrations of a project. */
export async function escalationTargets(db: Db, projectId: string): Promise<{ id: string; type: string }[]> {
  return db<{ id: string; type: string }[]>`
    select i.id, i.type from escalation_integrations e join integrations i on i.id = e.integration_id and i.active
    where e.project_id = ${projectId} order by i.created_at, i.id`;
}

/** The project of an alert (for a signed link, which names the alert alone). */
export async function alertProject(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db<{ project_id: string }[]>`select project_id from alerts where id = ${id}`;
  return row?.project_id;
}
