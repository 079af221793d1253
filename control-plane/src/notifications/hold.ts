import { degradedKinds, DomainEvent, expiryKinds, regionalKinds } from '../../../shared/src/contracts/events.ts';
import { nameUuid } from '../../../shared/src/name-uuid.ts';
import { childTiming, heartbeatUpAt, incidentEnd, parentIncidents, parentRows } from '../dependencies/repo.ts';
import { decideDependent, recoveryGraceMs, settleMs, type DependentDecision } from '../dependencies/rules.ts';
import { snoozeWindow } from '../alerts/rules.ts';
import { decideAlert, decideRelease } from '../maintenance/decision.ts';
import { maintenanceUntil } from '../maintenance/schedule.ts';
import { coverage } from '../maintenance/service.ts';
import type { Db } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { decideFlap } from '../monitors/flapping.ts';
import { recordEvent } from '../platform/outbox.ts';
import { deliveriesForEvents, deliveriesForGroup } from './deliveries.ts';
import { groupRelease } from './grouping.ts';
import * as held from './held-repo.ts';
import { alertPolicies, claimSettled, endFlapping, noteFlapChange, startFlapping, stateChanges } from './policy-repo.ts';
import { markNotified } from './repo.ts';

export interface RoutedBatch {
  deliveries: number;
  /** Downs held by a maintenance window, a parent's outage or a grouping window. */
  held: number;
  /** Ups dropped with their unsent down, and changes of flapping monitors not sent. */
  dropped: number;
  /** Ups left for a later look: an earlier alert of their subject is still being decided. */
  deferred: string[];
}

/**
 * Routes alert events in the caller's transaction, each through the policies in turn (ADR 0029,
 * ADR 0030): a maintenance window covering the subject holds a down; a flapping monitor's change
 * is not sent (the change that makes it flap sends one "flapping" message instead); a down whose
 * parent is (or may yet be found) down waits with that parent's outage; a project that groups
 * alerts holds its monitors' changes until its window ends. An up is delivered exactly when its
 * down was. Expiry warnings are delivered at once. Decisions read the event's own occurred_at, so an event routed late or again is
 * decided the same way. Projects with none of these policies take the plain path: two small
 * look-ups per batch.
 */
export async function routeAlerts(tx: Db, events: readonly DomainEvent[], now: Date = new Date()): Promise<RoutedBatch> {
  const projects = [...new Set(events.map((e) => e.project_id))];
  const cov = await coverage(tx, projects);
  const unsent = await held.projectsWithUnsentDowns(tx, projects);
  const policies = await alertPolicies(tx, events);
  const none = policies.children.size === 0 && policies.groupSeconds.size === 0 && policies.flap.size === 0 && policies.snoozed.size === 0;
  // A snoozed subject's downs wait for the snooze's end as they would for a maintenance window's.
  const windowsOf = (e: DomainEvent) => {
    const snoozed = policies.snoozed.get(e.subject.id);
    const windows = cov.covering(e.project_id, e.subject);
    return snoozed === undefined
      ? { windows, reason: 'maintenance' as const }
      : { windows: [...windows, snoozeWindow(snoozed)], reason: 'snooze' as const };
  };
  if (!cov.any && unsent.size === 0 && none)
    return { deliveries: await deliveriesForEvents(tx, events), held: 0, dropped: 0, deferred: [] };

  const batch = events.map((e) => e.id);
  const route: DomainEvent[] = [];
  const notices: DomainEvent[] = [];
  const settled: string[] = [];
  const deferred: string[] = [];
  let heldCount = 0;
  const hold = async (e: DomainEvent, until: Date | null, reason: held.HoldReason, dependency?: held.DependencyHold) => {
    await held.insertHeld(tx, e, until, reason, dependency);
    settled.push(e.id);
    heldCount++;
  };
  for (const e of events) {
    const at = Date.parse(e.occurred_at);
    if (expiryKinds.has(e.kind)) {
      // A warning about a date, sent once: holding it for a window or a snooze would only make it
      // later, and it is neither a change of state to pair, flap or group.
      route.push(e);
      continue;
    }
    if (regionalKinds.has(e.kind) || degradedKinds.has(e.kind)) {
      // A regional incident or degraded period of a monitor that asks for them: sent unless a maintenance window covers it.
      const inWindow = decideAlert({
        direction: 'down',
        occurredAt: at,
        windows: windowsOf(e).windows,
        downUnsent: false,
      });
      if (inWindow.action === 'hold') settled.push(e.id);
      else route.push(e);
      continue;
    }
    const direction = e.kind.endsWith('.down') ? 'down' : 'up';
    if (direction === 'up') {
      const downs = await held.unsentDowns(tx, e.subject.id);
      const decision = decideAlert({ direction, occurredAt: at, windows: [], downUnsent: downs.length > 0 });
      if (decision.action === 'drop') {
        await held.markRecovered(tx, downs);
        settled.push(e.id);
        continue;
      }
      if (await held.earlierAlertWaiting(tx, e, batch)) {
        deferred.push(e.id);
        continue;
      }
    } else {
      const { windows, reason } = windowsOf(e);
      const decision = decideAlert({ direction, occurredAt: at, windows, downUnsent: false });
      if (decision.action === 'hold') {
        // Named after what holds it: the snooze when it alone covers the down.
        const byWindows = maintenanceUntil(cov.covering(e.project_id, e.subject), at);
        await hold(e, new Date(decision.until), byWindows === null ? reason : 'maintenance');
        continue;
      }
    }
    const flap = policies.flap.get(e.subject.id);
    if (flap && e.subject.type === 'monitor') {
      const windowMs = flap.windowSeconds * 1000;
      const changes = flap.flapping ? 0 : await stateChanges(tx, e.subject.id, new Date(at - windowMs), new Date(at));
      const decision = decideFlap({ policy: { threshold: flap.threshold, windowMs }, flapping: flap.flapping, changes });
      if (decision.action === 'start' && (await startFlapping(tx, e.subject.id, e.occurred_at))) {
        flap.flapping = true;
        notices.push(
          await recordEvent(tx, {
            kind: 'monitor.flapping',
            occurred_at: e.occurred_at,
            project_id: e.project_id,
            subject: e.subject,
            data: { status: direction, changes, window_seconds: flap.windowSeconds, flapping_since: e.occurred_at, ...urlOf(e) },
          }),
        );
        settled.push(e.id);
        continue;
      }
      if (decision.action !== 'send') {
        await noteFlapChange(tx, e.subject.id, e.occurred_at);
        settled.push(e.id);
        continue;
      }
    }
    if (direction === 'down' && policies.children.has(e.subject.id)) {
      const decision = await dependentDecision(tx, e, now, null, true);
      if (decision.action === 'join') {
        await hold(e, null, 'dependency', {
          parentId: decision.parentId,
          parentIncidentId: decision.incidentId,
          settleUntil: decision.settleUntil,
        });
        continue;
      }
      if (decision.action === 'wait') {
        await hold(e, new Date(decision.until), 'dependency', {
          parentId: null,
          parentIncidentId: null,
          settleUntil: decision.settleUntil,
        });
        continue;
      }
    }
    const groupSeconds = policies.groupSeconds.get(e.project_id);
    if (groupSeconds !== undefined && e.subject.type === 'monitor') {
      // One router at a time decides a project's groups, so concurrent routers never open two.
      await tx`select pg_advisory_xact_lock(hashtext('alert-group'), hashtext(${e.project_id}))`;
      const openReleases = await held.openGroupReleases(tx, e.project_id, e.kind);
      await hold(e, new Date(groupRelease({ occurredAt: at, windowMs: groupSeconds * 1000, openReleases })), 'group');
      continue;
    }
    route.push(e);
  }
  await markNotified(tx, settled);
  const deliveries = (await deliveriesForEvents(tx, route)) + (await deliveriesForEvents(tx, notices));
  return { deliveries, held: heldCount, dropped: settled.length - heldCount, deferred };
}

const urlOf = (e: DomainEvent) => (typeof e.data.url === 'string' ? { url: e.data.url } : {});

/**
 * The dependency rule for a child's down (dependencies/rules.ts), with its parents' data around
 * the down's own time: incidents of monitor parents overlapping [down, wait's end] (or up to now
 * when judged again later), heartbeat parents' status now.
 */
async function dependentDecision(
  tx: Db,
  e: Pick<DomainEvent, 'subject' | 'occurred_at'>,
  now: Date,
  joined: { parentId: string; incidentId: string | null } | null,
  childStillDown: boolean,
  settleAt?: number,
): Promise<DependentDecision & { settleUntil: Date }> {
  const at = Date.parse(e.occurred_at);
  const rows = await parentRows(tx, e.subject.id);
  const settleUntil =
    settleAt ??
    at + Math.max(0, ...rows.map((p) => settleMs({ type: p.type, intervalSeconds: p.interval_seconds, confirmDown: p.confirm_down })));
  const incidents = await parentIncidents(tx, e.subject.id, new Date(at), new Date(settleUntil));
  const parents = rows.map((p) => ({ id: p.id, type: p.type, incident: incidents.get(p.id) ?? null, heartbeatDown: p.heartbeat_down }));
  let recoveredAt: number | null = null;
  let childGraceMs = 0;
  if (joined) {
    const ended = joined.incidentId ? await incidentEnd(tx, joined.incidentId) : await heartbeatUpAt(tx, joined.parentId);
    recoveredAt = ended ? Date.parse(formatTimestamp(ended)) : null;
    const timing = e.subject.type === 'monitor' ? await childTiming(tx, e.subject.id) : null;
    childGraceMs = recoveryGraceMs({
      type: e.subject.type === 'monitor' ? 'monitor' : 'heartbeat',
      intervalSeconds: timing?.interval_seconds ?? null,
      confirmUp: timing?.confirm_up ?? null,
    });
  }
  const facts = { settleUntil, now: now.getTime(), parents, joined, childStillDown, recoveredAt, childGraceMs };
  return { ...decideDependent(facts), settleUntil: new Date(settleUntil) };
}

/**
 * Dependency holds to judge again (their wait ran out, or the parent they joined is no longer
 * down), by the rule: join the parent found down, wait on, or, no parent down any more, deliver a
 * child still down now (or drop one that recovered: its up is dropped with it).
 */
export async function releaseDependents(tx: Db, now: Date, limit: number): Promise<{ rows: number; released: number; deliveries: number }> {
  const due = await held.claimDependents(tx, now, limit);
  let released = 0;
  let deliveries = 0;
  for (const h of due) {
    const event = DomainEvent.safeParse(h.payload);
    if (!event.success) {
      await held.settleHeld(tx, h.event_id, 'dropped');
      continue;
    }
    const joined = h.parent_id ? { parentId: h.parent_id, incidentId: h.parent_incident_id } : null;
    const decision = await dependentDecision(
      tx,
      event.data,
      now,
      joined,
      await held.stillDown(tx, h),
      Date.parse(formatTimestamp(h.settle_until)),
    );
    if (decision.action === 'join') {
      await held.joinParent(tx, h.event_id, decision.parentId, decision.incidentId);
    } else if (decision.action === 'wait') {
      await held.postponeHeld(tx, h.event_id, new Date(decision.until));
    } else if (decision.action === 'send') {
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

/**
 * Groups whose window has ended, each sent as one message per integration (content.ts,
 * groupedNotification): downs still down and every up; a down that recovered meanwhile is
 * dropped (its up was dropped with it, or will be).
 */
export async function releaseGroups(tx: Db, now: Date): Promise<{ rows: number; released: number; deliveries: number }> {
  // One router releases groups at a time: two claiming the rows of one group at once could each
  // take part of it and send it as two messages. The other routers skip this pass.
  const [{ mine }] = (await tx`select pg_try_advisory_xact_lock(hashtext('alert-group-release')) as mine`) as unknown as [
    { mine: boolean },
  ];
  if (!mine) return { rows: 0, released: 0, deliveries: 0 };
  const due = await held.claimDueGroups(tx, now);
  const groups = new Map<string, typeof due>();
  for (const h of due) {
    const key = `${h.project_id}|${formatTimestamp(h.release_at)}|${h.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), h]);
  }
  let released = 0;
  let deliveries = 0;
  for (const [key, rows] of groups) {
    const members: DomainEvent[] = [];
    for (const h of rows) {
      const event = DomainEvent.safeParse(h.payload);
      const send = event.success && (h.kind.endsWith('.up') || (await held.stillDown(tx, h)));
      if (await held.settleHeld(tx, h.event_id, send ? 'released' : 'dropped')) if (send && event.success) members.push(event.data);
    }
    released += members.length;
    // Named by its members: a repeat of this release adds nothing, and a later group that happens
    // to share the release time (a change routed after its group was sent) is a group of its own.
    const id = nameUuid(
      `uptime-alert-group:${key}:${members
        .map((m) => m.id)
        .sort()
        .join(',')}`,
    );
    deliveries += await deliveriesForGroup(tx, id, members);
  }
  return { rows: due.length, released, deliveries };
}

/**
 * Flapping monitors that have settled (no change for a whole window): one `monitor.settled`
 * event each, saying how the monitor is now, with its deliveries.
 */
export async function releaseSettled(tx: Db, now: Date, limit: number): Promise<{ rows: number; deliveries: number }> {
  const due = await claimSettled(tx, now, limit);
  let deliveries = 0;
  for (const m of due) {
    if (!(await endFlapping(tx, m.id, m.flapping_since))) continue;
    const event = await recordEvent(tx, {
      kind: 'monitor.settled',
      // It settled a window after its last change.
      occurred_at: new Date(Date.parse(formatTimestamp(m.flap_last_change_at)) + m.flap_window_seconds * 1000).toISOString(),
      project_id: m.project_id,
      subject: { type: 'monitor', id: m.id, name: m.name },
      data: {
        status: m.status === 2 ? 'down' : 'up',
        flapping_since: formatTimestamp(m.flapping_since),
        last_change_at: formatTimestamp(m.flap_last_change_at),
        url: m.url,
        ...(m.incident_id ? { incident_id: m.incident_id } : {}),
      },
    });
    deliveries += await deliveriesForEvents(tx, [event]);
  }
  return { rows: due.length, deliveries };
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
  const snoozes = await alertPolicies(
    tx,
    due.map((h) => ({ project_id: h.project_id, subject: { type: h.subject_type, id: h.subject_id } })),
  );
  let released = 0;
  let deliveries = 0;
  for (const h of due) {
    const event = DomainEvent.safeParse(h.payload);
    const decision = decideRelease({
      releaseAt: Date.parse(formatTimestamp(h.release_at)),
      windows: [
        ...cov.covering(h.project_id, { type: h.subject_type, id: h.subject_id }),
        ...(snoozes.snoozed.has(h.subject_id) ? [snoozeWindow(snoozes.snoozed.get(h.subject_id)!)] : []),
      ],
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
