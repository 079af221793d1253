import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { requireProject, type Principal } from '../accounts/bearer.ts';
import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';
import { AppError, notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { recordEvent, type OutboxPublisher } from '../platform/outbox.ts';
import * as repo from './repo.ts';
import { MAX_SNOOZE_MINUTES } from './rules.ts';
import { recordStep, stepDeliveries } from './steps.ts';
import { alertView, type Alert } from './view.ts';

export type AlertsContext = ApiContext & { outbox?: Pick<OutboxPublisher, 'publish'> };

/** Who did it, as messages name them: a user's name or email, or "a link in a message". */
export type Actor = { userId: string; via: 'api' | 'dashboard' | 'mcp' } | { via: 'link' };

async function actorName(db: Db, actor: Actor): Promise<string> {
  if (actor.via === 'link') return 'a link in a message';
  const [u] = await db<{ name: string; email: string }[]>`select name, email from users where id = ${actor.userId}`;
  return u ? u.name.trim() || u.email : 'a user';
}

const conflict = (message: string) => new AppError('CONFLICT', message);

async function publish(ctx: AlertsContext, events: readonly DomainEvent[]): Promise<void> {
  if (events.length > 0 && ctx.outbox) await ctx.outbox.publish(events).catch(() => undefined);
}

export async function listAlerts(
  ctx: ApiContext,
  p: Principal,
  q: PageQuery & {
    project_id?: string | undefined;
    status?: repo.AlertFilter['status'];
    monitor_id?: string | undefined;
    heartbeat_id?: string | undefined;
  },
): Promise<{ items: Alert[]; total: number }> {
  if (q.project_id) requireProject(p, q.project_id);
  const projectIds = q.project_id ? [q.project_id] : [...p.projectIds];
  const { items, total } = await repo.listAlerts(
    ctx.sql,
    { projectIds, status: q.status, monitorId: q.monitor_id, heartbeatId: q.heartbeat_id },
    { limit: q.per_page, offset: (q.page - 1) * q.per_page },
  );
  return { items: items.map(alertView), total };
}

export async function getAlert(ctx: ApiContext, p: Principal, id: string): Promise<Alert> {
  return alertIn(ctx, [...p.projectIds], id);
}

/** The project of an alert, for a signed link (which names the alert alone); undefined when there is none. */
export function projectOfAlert(ctx: ApiContext, id: string): Promise<string | undefined> {
  return repo.alertProject(ctx.sql, id);
}

/** An alert of one of these projects, or 404. */
export async function alertIn(ctx: ApiContext, projectIds: readonly string[], id: string): Promise<Alert> {
  const a = await repo.findAlert(ctx.sql, id, projectIds);
  if (!a) throw notFound();
  return alertView(a);
}

/**
 * Acknowledges an open alert: its re-notifications and escalation stop, and the people who heard
 * of it are told who took it (an `alert.acknowledged` event with its deliveries, in the same
 * transaction). Acknowledging it again changes nothing; a resolved alert cannot be (409).
 */
export async function acknowledgeAlert(ctx: AlertsContext, projectIds: readonly string[], id: string, actor: Actor): Promise<Alert> {
  const events: DomainEvent[] = [];
  const view = await ctx.sql.begin(async (tx) => {
    const a = await repo.findAlert(tx, id, projectIds, { lock: true });
    if (!a) throw notFound();
    if (a.acknowledged_at !== null) return alertView(a);
    if (a.resolved_at !== null) throw conflict('The alert is resolved: there is nothing left to acknowledge.');
    const now = ctx.now();
    const by = await actorName(tx, actor);
    await repo.markAcknowledged(tx, a.id, now, by);
    const step = await recordStep(tx, a, {
      kind: 'alert.acknowledged',
      key: 'acknowledged',
      occurredAt: now.toISOString(),
      data: { by, via: actor.via, acknowledged_at: now.toISOString() },
      audience: a.escalated_at !== null ? 'everyone' : 'responders',
    });
    events.push(step.event);
    return alertView((await repo.findAlert(tx, id, projectIds))!);
  });
  await publish(ctx, events);
  return view;
}

export function snoozeUntil(now: Date, minutes: number): Date {
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_SNOOZE_MINUTES)
    throw new AppError('VALIDATION', `The minutes field must be a whole number from 1 to ${MAX_SNOOZE_MINUTES}.`, {
      minutes: [`The minutes field must be a whole number from 1 to ${MAX_SNOOZE_MINUTES}.`],
    });
  return new Date(now.getTime() + minutes * 60_000);
}

/**
 * Snoozes an open alert: no re-notification or escalation until then; still open at the end, it
 * is re-notified at once. An `alert.snoozed` event tells the people who heard of it.
 */
export async function snoozeAlert(
  ctx: AlertsContext,
  projectIds: readonly string[],
  id: string,
  minutes: number,
  actor: Actor,
): Promise<Alert> {
  const now = ctx.now();
  const until = snoozeUntil(now, minutes);
  const events: DomainEvent[] = [];
  const view = await ctx.sql.begin(async (tx) => {
    const a = await repo.findAlert(tx, id, projectIds, { lock: true });
    if (!a) throw notFound();
    if (a.resolved_at !== null) throw conflict('The alert is resolved: there is nothing left to snooze.');
    const by = await actorName(tx, actor);
    await repo.markSnoozed(tx, a.id, until, by);
    const step = await recordStep(tx, a, {
      kind: 'alert.snoozed',
      key: `snoozed:${now.toISOString()}`,
      occurredAt: now.toISOString(),
      data: { by, via: actor.via, until: until.toISOString(), minutes },
      audience: a.escalated_at !== null ? 'everyone' : 'responders',
    });
    events.push(step.event);
    return alertView((await repo.findAlert(tx, id, projectIds))!);
  });
  await publish(ctx, events);
  return view;
}

export interface SnoozedSubject {
  type: 'monitor' | 'heartbeat';
  id: string;
  project_id: string;
  name: string;
  snoozed_until: string | null;
}

/**
 * Snoozes a monitor or heartbeat until `now + minutes` (null: ends its snooze): its downs meanwhile
 * are held and sent at the end if it is still down, its open alerts wait too. A `monitor.snoozed`
 * (`heartbeat.snoozed`) event, with `until` null when a snooze ends, tells its integrations.
 */
export async function snoozeSubject(
  ctx: AlertsContext,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
  projectIds: readonly string[],
  minutes: number | null,
  actor: Actor,
): Promise<SnoozedSubject> {
  const now = ctx.now();
  const until = minutes === null ? null : snoozeUntil(now, minutes);
  const events: DomainEvent[] = [];
  const result = await ctx.sql.begin(async (tx) => {
    const table = subject.type === 'monitor' ? tx`monitors` : tx`heartbeats`;
    const [row] = await tx<{ id: string; project_id: string; name: string; url: string | null; was: string | null }[]>`
      select id, project_id, name, ${subject.type === 'monitor' ? tx`url` : tx`null::text`} as url, snoozed_until as was
      from ${table} where id = ${subject.id} and project_id = any(${arrayLiteral(projectIds)}::uuid[]) for update`;
    if (!row) throw notFound();
    const [updated] = await tx<{ snoozed_until: string | null }[]>`
      update ${table} set snoozed_until = ${until} where id = ${subject.id} returning snoozed_until`;
    if (until === null) {
      // The snooze ends now: downs it held are judged at once.
      await tx`update held_alerts set release_at = ${now} where subject_id = ${subject.id} and status = 'held' and reason = 'snooze'`;
    }
    await repo.reconsider(tx, { subjectId: subject.id });
    if (until !== null || row.was !== null) {
      const by = await actorName(tx, actor);
      const event = await recordEvent(tx, {
        kind: subject.type === 'monitor' ? 'monitor.snoozed' : 'heartbeat.snoozed',
        occurred_at: now.toISOString(),
        project_id: row.project_id,
        subject: { type: subject.type, id: row.id, name: row.name },
        data: {
          by,
          via: actor.via,
          until: until?.toISOString() ?? null,
          ...(minutes !== null ? { minutes } : {}),
          ...(row.url ? { url: row.url } : {}),
        },
      });
      await stepDeliveries(tx, event, 'responders');
      events.push(event);
    }
    return {
      type: subject.type,
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      snoozed_until: updated!.snoozed_until === null ? null : formatTimestamp(updated!.snoozed_until),
    };
  });
  await publish(ctx, events);
  return result;
}

/** The project's response policy changed: open alerts are judged again by it. */
export async function policyChanged(sql: Sql | Db, projectId: string): Promise<void> {
  await repo.reconsider(sql, { projectId });
}

/** The open alerts of a monitor or heartbeat of the principal's (its page); 404 when it is not one of theirs. */
export async function openAlertsOfSubject(
  ctx: ApiContext,
  p: Principal,
  subject: { type: 'monitor' | 'heartbeat'; id: string },
): Promise<Alert[]> {
  const table = subject.type === 'monitor' ? ctx.sql`monitors` : ctx.sql`heartbeats`;
  const [owner] = await ctx.sql<{ project_id: string }[]>`select project_id from ${table} where id = ${subject.id}`;
  if (!owner || !p.projectIds.has(owner.project_id)) throw notFound();
  return (await repo.openAlertsOf(ctx.sql, [subject.id])).map(alertView);
}
