import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Notification } from '../../../shared/src/contracts/notify.ts';
import { openAlerts, resolveAlerts } from '../alerts/repo.ts';
import type { Db } from '../platform/db/sql.ts';
import { groupedNotification, notificationFromEvent } from './content.ts';
import { groupDelivery } from './grouping.ts';
import { insertDeliveries, markNotified, projectNames, recipientsOf, type NewDelivery } from './repo.ts';

/**
 * Makes the deliveries of these monitor and heartbeat events, in the caller's transaction, and
 * marks the events notified. The unique (event, integration) pair makes a repeat a no-op.
 */
export async function deliveriesForEvents(tx: Db, events: readonly DomainEvent[]): Promise<number> {
  const unique = [...new Map(events.map((e) => [e.id, e])).values()];
  if (unique.length === 0) return 0;
  await markNotified(
    tx,
    unique.map((e) => e.id),
  );
  const names = await projectNames(tx, [...new Set(unique.map((e) => e.project_id))]);
  const live = unique.filter((e) => names.has(e.project_id));
  // A down sent opens its alert (before any message names it); an up sent resolves it.
  await openAlerts(tx, live);
  await resolveAlerts(tx, live);
  const recipients = await recipientsOf(tx, live);
  const byId = new Map(live.map((e) => [e.id, e]));
  const inserted = await insertDeliveries(
    tx,
    recipients.map((r) => {
      const e = byId.get(r.event_id)!;
      return {
        event_id: e.id,
        integration_id: r.id,
        project_id: e.project_id,
        trigger_id: null,
        kind: e.kind,
        payload: notificationFromEvent(e, { id: e.project_id, name: names.get(e.project_id)! }),
      };
    }),
  );
  return inserted.length;
}

/**
 * The deliveries of a released group of monitor alerts (all downs, or all ups, of one project):
 * per integration, one grouped message when it hears of two or more of them, each on its own
 * otherwise (and always for PagerDuty, which pairs each down with its up). The events are
 * already marked notified (they were held). The group's id is stable, so a repeat adds nothing.
 */
export async function deliveriesForGroup(tx: Db, groupId: string, events: readonly DomainEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const projectId = events[0]!.project_id;
  const names = await projectNames(tx, [projectId]);
  const name = names.get(projectId);
  if (name === undefined) return 0;
  const project = { id: projectId, name };
  await openAlerts(tx, events);
  await resolveAlerts(tx, events);
  const [settings] = await tx<{ seconds: number | null }[]>`select alert_group_seconds as seconds from projects where id = ${projectId}`;
  const byId = new Map(events.map((e) => [e.id, e]));
  const byIntegration = new Map<string, { type: string; events: DomainEvent[] }>();
  for (const r of await recipientsOf(tx, events)) {
    const entry = byIntegration.get(r.id) ?? { type: r.type, events: [] };
    entry.events.push(byId.get(r.event_id)!);
    byIntegration.set(r.id, entry);
  }
  const rows: NewDelivery[] = [];
  for (const [integrationId, { type, events: members }] of byIntegration) {
    if (groupDelivery({ members: members.length, integrationType: type }).mode === 'grouped') {
      const n = groupedNotification(groupId, project, members, settings?.seconds ?? 0);
      rows.push({ event_id: groupId, integration_id: integrationId, project_id: projectId, trigger_id: null, kind: n.event, payload: n });
    } else {
      for (const e of members) {
        rows.push({
          event_id: e.id,
          integration_id: integrationId,
          project_id: projectId,
          trigger_id: null,
          kind: e.kind,
          payload: notificationFromEvent(e, project),
        });
      }
    }
  }
  return (await insertDeliveries(tx, rows)).length;
}

/**
 * The deliveries of one accepted call of a trigger's notify URL, one per integration, made in the
 * call's transaction; workers are woken when it commits. Returns how many were made.
 */
export async function deliveriesForTriggerCall(
  tx: Db,
  call: { triggerId: string; projectId: string; notification: Notification; integrationIds: readonly string[] },
): Promise<number> {
  const inserted = await insertDeliveries(
    tx,
    call.integrationIds.map((integrationId) => ({
      event_id: call.notification.id,
      integration_id: integrationId,
      project_id: call.projectId,
      trigger_id: call.triggerId,
      kind: call.notification.event,
      payload: call.notification,
    })),
  );
  return inserted.length;
}
