import { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { decideAlert, decideRelease } from '../maintenance/decision.ts';
import { coverage } from '../maintenance/service.ts';
import type { Db } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { deliveriesForEvents } from './deliveries.ts';
import * as held from './held-repo.ts';
import { markNotified } from './repo.ts';

export interface RoutedBatch {
  deliveries: number;
  /** Downs held by a maintenance window, and ups dropped with their unsent down. */
  held: number;
  dropped: number;
  /** Ups left for a later look: an earlier alert of their subject is still being decided. */
  deferred: string[];
}

/**
 * Routes alert events in the caller's transaction, maintenance windows considered (ADR 0029):
 * a down that occurred inside a window covering its subject is held (a held_alerts row) instead
 * of delivered; an up is delivered only when its down was. Decisions read the event's own
 * occurred_at, so an event routed late or again is decided the same way. Projects without a
 * window or an unsent down take the plain path: one look-up per batch.
 */
export async function routeAlerts(tx: Db, events: readonly DomainEvent[]): Promise<RoutedBatch> {
  const projects = [...new Set(events.map((e) => e.project_id))];
  const cov = await coverage(tx, projects);
  const unsent = await held.projectsWithUnsentDowns(tx, projects);
  if (!cov.any && unsent.size === 0) return { deliveries: await deliveriesForEvents(tx, events), held: 0, dropped: 0, deferred: [] };

  const batch = events.map((e) => e.id);
  const route: DomainEvent[] = [];
  const settled: string[] = [];
  const deferred: string[] = [];
  let heldCount = 0;
  for (const e of events) {
    const direction = e.kind.endsWith('.down') ? 'down' : 'up';
    if (direction === 'up') {
      const downs = await held.unsentDowns(tx, e.subject.id);
      const decision = decideAlert({ direction, occurredAt: Date.parse(e.occurred_at), windows: [], downUnsent: downs.length > 0 });
      if (decision.action === 'drop') {
        await held.markRecovered(tx, downs);
        settled.push(e.id);
      } else if (await held.earlierAlertWaiting(tx, e, batch)) {
        deferred.push(e.id);
      } else {
        route.push(e);
      }
      continue;
    }
    const windows = cov.covering(e.project_id, e.subject);
    const decision = decideAlert({ direction, occurredAt: Date.parse(e.occurred_at), windows, downUnsent: false });
    if (decision.action === 'hold') {
      await held.insertHeld(tx, e, new Date(decision.until));
      settled.push(e.id);
      heldCount++;
    } else {
      route.push(e);
    }
  }
  await markNotified(tx, settled);
  return { deliveries: await deliveriesForEvents(tx, route), held: heldCount, dropped: settled.length - heldCount, deferred };
}

/**
 * Held downs whose window has ended, judged at their own release time: still down, their
 * deliveries are made now; recovered, they are dropped; covered by a window again (a new or
 * edited one), they wait for its end. The row is settled by a conditional update in the
 * transaction that makes the deliveries, so two routers never both release it.
 */
export async function releaseHeld(tx: Db, now: Date, limit: number): Promise<{ rows: number; released: number; deliveries: number }> {
  const due = await held.claimDueHeld(tx, now, limit);
  if (due.length === 0) return { rows: 0, released: 0, deliveries: 0 };
  const cov = await coverage(
    tx,
    due.map((h) => h.project_id),
  );
  let released = 0;
  let deliveries = 0;
  for (const h of due) {
    const event = DomainEvent.safeParse(h.payload);
    const decision = decideRelease({
      releaseAt: Date.parse(formatTimestamp(h.release_at)),
      windows: cov.covering(h.project_id, { type: h.subject_type, id: h.subject_id }),
      stillDown: event.success && (await held.stillDown(tx, h)),
    });
    if (decision.action === 'postpone') {
      await held.postponeHeld(tx, h.event_id, new Date(decision.until));
    } else if (decision.action === 'release' && event.success) {
      if (await held.settleHeld(tx, h.event_id, 'released')) {
        released++;
        deliveries += await deliveriesForEvents(tx, [event.data]);
      }
    } else {
      await held.settleHeld(tx, h.event_id, 'dropped');
    }
  }
  return { rows: due.length, released, deliveries };
}
