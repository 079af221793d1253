import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Notification } from '../../../shared/src/contracts/notify.ts';
import type { Db } from '../platform/db/sql.ts';
import { notificationFromEvent } from './content.ts';
import { insertDeliveries, markNotified, projectNames, recipientsOf } from './repo.ts';

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
