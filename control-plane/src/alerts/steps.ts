import type { DomainEvent, EventKind } from '../../../shared/src/contracts/events.ts';
import { nameUuid } from '../../../shared/src/name-uuid.ts';
import type { NewDelivery } from '../notifications/repo.ts';
import { insertDeliveries, projectNames, recipientsOf } from '../notifications/repo.ts';
import { notificationFromEvent } from '../notifications/content.ts';
import { stillDown } from '../notifications/held-repo.ts';
import type { Db } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { recordEvent } from '../platform/outbox.ts';
import * as repo from './repo.ts';
import { decideStep, type AlertTimes, type ResponsePolicy } from './rules.ts';

const ms = (pg: string | null): number | null => (pg === null ? null : Date.parse(formatTimestamp(pg)));

export function alertTimes(a: repo.AlertRow): AlertTimes {
  const own = ms(a.snoozed_until);
  const subject = ms(a.subject_snoozed_until);
  return {
    openedAt: ms(a.opened_at)!,
    acknowledged: a.acknowledged_at !== null,
    resolved: a.resolved_at !== null,
    snoozedUntil: own === null ? subject : subject === null ? own : Math.max(own, subject),
    renotified: a.renotified,
    renotifyAnchor: ms(a.renotify_anchor)!,
    escalated: a.escalated_at !== null,
  };
}

export function policyOf(a: repo.DueAlert): ResponsePolicy {
  return {
    renotifyMs: a.renotify_minutes === null ? null : a.renotify_minutes * 60_000,
    escalateAfterMs: a.escalate_after_minutes === null ? null : a.escalate_after_minutes * 60_000,
    escalationTargets: a.escalation_targets,
  };
}

/** Who hears of an alert's step: the integrations its down went to, and, once it escalated (or when it does), the escalation ones. */
export type Audience = 'responders' | 'escalation' | 'everyone';

/**
 * Records one step of an alert as an event (its id derived from the alert and the step, so a
 * replay records nothing new) and makes its deliveries, in the caller's transaction.
 */
export async function recordStep(
  tx: Db,
  a: repo.AlertRow,
  step: { kind: EventKind; key: string; occurredAt: string; data: Record<string, unknown>; audience: Audience },
): Promise<{ event: DomainEvent; deliveries: number }> {
  const subject = {
    type: a.monitor_id ? ('monitor' as const) : ('heartbeat' as const),
    id: (a.monitor_id ?? a.heartbeat_id)!,
    name: a.subject_name,
  };
  const event: DomainEvent = {
    id: nameUuid(`uptime-alert:${a.id}:${step.key}`),
    kind: step.kind,
    occurred_at: step.occurredAt,
    project_id: a.project_id,
    subject,
    data: {
      ...a.opening.data,
      alert_id: a.id,
      opened_at: formatTimestamp(a.opened_at),
      ...step.data,
    },
  };
  const [seen] = await tx`select 1 from outbox_events where id = ${event.id}`;
  if (seen) return { event, deliveries: 0 };
  await recordEvent(tx, event, { alert: false });
  return { event, deliveries: await stepDeliveries(tx, event, step.audience) };
}

/** The deliveries of an alert's event to its audience, in the caller's transaction; how many were made. */
export async function stepDeliveries(tx: Db, e: DomainEvent, audience: Audience): Promise<number> {
  const names = await projectNames(tx, [e.project_id]);
  const name = names.get(e.project_id);
  if (name === undefined) return 0;
  const targets = new Set<string>();
  if (audience !== 'escalation') for (const r of await recipientsOf(tx, [e])) targets.add(r.id);
  if (audience !== 'responders') for (const r of await repo.escalationTargets(tx, e.project_id)) targets.add(r.id);
  const payload = notificationFromEvent(e, { id: e.project_id, name });
  const rows: NewDelivery[] = [...targets].map((integrationId) => ({
    event_id: e.id,
    integration_id: integrationId,
    project_id: e.project_id,
    trigger_id: null,
    kind: e.kind,
    payload,
  }));
  return (await insertDeliveries(tx, rows)).length;
}

/**
 * The escalation pass (run by the notify role's router every second and on every wake-up):
 * alerts whose step is due are re-notified or escalated by the rules (rules.ts), each step an
 * event with its deliveries in the transaction that records it on the alert, so a crash either
 * loses the whole step (done again by the next pass) or none of it. An alert whose subject is no
 * longer down is resolved instead: a late up must not be preceded by a "still down".
 */
export async function stepAlerts(tx: Db, now: Date, limit: number): Promise<{ rows: number; steps: number; deliveries: number }> {
  const due = await repo.claimDueAlerts(tx, now, limit);
  let steps = 0;
  let deliveries = 0;
  for (const a of due) {
    const down = await stillDown(tx, {
      subject_type: a.monitor_id ? 'monitor' : 'heartbeat',
      subject_id: (a.monitor_id ?? a.heartbeat_id)!,
      payload: a.opening,
      occurred_at: a.opened_at,
    });
    if (!down) {
      await repo.markResolved(tx, a.id, now);
      continue;
    }
    const times = alertTimes(a);
    const step = decideStep(times, policyOf(a), now.getTime());
    const next = step.next === null ? null : new Date(step.next);
    if (step.action === 'wait') {
      await repo.scheduleNext(tx, a.id, next);
      continue;
    }
    const minutes = Math.floor((now.getTime() - times.openedAt) / 60_000);
    if (step.action === 'escalate') {
      if (!(await repo.markEscalated(tx, a.id, now, next))) continue;
      const at = new Date(times.openedAt + a.escalate_after_minutes! * 60_000);
      const r = await recordStep(tx, a, {
        kind: 'alert.escalated',
        key: 'escalated',
        occurredAt: new Date(Math.max(at.getTime(), times.snoozedUntil ?? 0)).toISOString(),
        data: { after_minutes: a.escalate_after_minutes, unacknowledged_minutes: minutes },
        audience: 'escalation',
      });
      steps++;
      deliveries += r.deliveries;
    } else {
      if (!(await repo.markRenotified(tx, a.id, step.count, new Date(step.anchor), next))) continue;
      const r = await recordStep(tx, a, {
        kind: 'alert.renotified',
        key: `renotified:${step.count}`,
        occurredAt: new Date(step.scheduledAt).toISOString(),
        data: { count: step.count, every_minutes: a.renotify_minutes, unacknowledged_minutes: minutes },
        audience: a.escalated_at !== null ? 'everyone' : 'responders',
      });
      steps++;
      deliveries += r.deliveries;
    }
  }
  return { rows: due.length, steps, deliveries };
}
