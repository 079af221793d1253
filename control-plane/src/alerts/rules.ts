import type { WindowSchedule } from '../maintenance/schedule.ts';

/**
 * The response rules of an alert (ADR 0032): pure functions of the alert's own times and the
 * project's policy, so a step decided late (a restart) or twice (two routers) comes out the same.
 */

/** The project's response policy; a null part is switched off. */
export interface ResponsePolicy {
  /** Re-notify every this many ms while the alert is open and not acknowledged. */
  renotifyMs: number | null;
  /** Escalate once after this many ms unacknowledged... */
  escalateAfterMs: number | null;
  /** ...to these integrations (none: no escalation). */
  escalationTargets: number;
}

export interface AlertTimes {
  openedAt: number;
  acknowledged: boolean;
  resolved: boolean;
  /** The later of the alert's snooze and its subject's, if any. */
  snoozedUntil: number | null;
  /** Re-notifications sent so far, and the scheduled time of the last one (openedAt before the first). */
  renotified: number;
  renotifyAnchor: number;
  escalated: boolean;
}

/** What the escalation pass does with an alert whose step is due. */
export type AlertStep =
  /** Nothing now; look again at `next` (null: never, until something about the alert changes). */
  | { action: 'wait'; next: number | null }
  /** Tell the project's escalation integrations; look again at `next`. */
  | { action: 'escalate'; next: number | null }
  /**
   * Re-notify (the `count`-th time), scheduled for `scheduledAt`; the next one counts from
   * `anchor`, the last point of the re-notify grid at or before now (a pass that comes late, after
   * an outage of the notify role, sends one re-notification, not the ones it missed).
   */
  | { action: 'renotify'; count: number; scheduledAt: number; anchor: number; next: number | null };

/** When the alert's next re-notification and escalation are due; null: not at all. */
export function dueTimes(a: AlertTimes, p: ResponsePolicy): { renotify: number | null; escalate: number | null } {
  if (a.acknowledged || a.resolved) return { renotify: null, escalate: null };
  const afterSnooze = (t: number) => (a.snoozedUntil !== null && a.snoozedUntil > t ? a.snoozedUntil : t);
  return {
    renotify: p.renotifyMs !== null ? afterSnooze(a.renotifyAnchor + p.renotifyMs) : null,
    escalate: p.escalateAfterMs !== null && p.escalationTargets > 0 && !a.escalated ? afterSnooze(a.openedAt + p.escalateAfterMs) : null,
  };
}

const earliest = (...ts: (number | null)[]): number | null => {
  const present = ts.filter((t): t is number => t !== null);
  return present.length > 0 ? Math.min(...present) : null;
};

/**
 * The step due at `now`, if any. Escalation goes first when both are due at once (it is the
 * louder step; the re-notification follows on the next pass). A snooze pushes both to its end:
 * an alert still open when the snooze runs out is re-notified then.
 */
export function decideStep(a: AlertTimes, p: ResponsePolicy, now: number): AlertStep {
  const due = dueTimes(a, p);
  if (due.escalate !== null && due.escalate <= now) {
    const after = dueTimes({ ...a, escalated: true }, p);
    return { action: 'escalate', next: earliest(after.renotify, after.escalate) };
  }
  if (due.renotify !== null && due.renotify <= now) {
    const period = p.renotifyMs!;
    // The grid restarts where the snooze (if any) pushed this one; a late pass skips to its last point.
    const anchor = due.renotify + Math.floor((now - due.renotify) / period) * period;
    const after = dueTimes({ ...a, renotified: a.renotified + 1, renotifyAnchor: anchor }, p);
    return {
      action: 'renotify',
      count: a.renotified + 1,
      scheduledAt: due.renotify,
      anchor,
      next: earliest(after.renotify, after.escalate),
    };
  }
  return { action: 'wait', next: earliest(due.renotify, due.escalate) };
}

/** The longest a snooze lasts (7 days), and the durations offered. */
export const MAX_SNOOZE_MINUTES = 10_080;
export const SNOOZE_CHOICES = [60, 240, 1440] as const;

/** Why an integration is reported failing, and when it is: a run of failed attempts this long or this old. */
export const FAILING_AFTER_ATTEMPTS = 5;
export const FAILING_AFTER_MS = 10 * 60_000;

export interface IntegrationRun {
  /** Consecutive failed attempts, this one included. */
  failures: number;
  /** When the run of failures began. */
  failingSince: number;
  /** The project was already told of this run. */
  alerted: boolean;
}

/**
 * The "delivery failing" rule, judged at each failed attempt: an integration whose attempts have
 * failed FAILING_AFTER_ATTEMPTS times in a row, or for FAILING_AFTER_MS since the first of them
 * (with at least two failures, so one slow retry is not a run), is reported once per run.
 */
export function integrationFailing(run: IntegrationRun, at: number): boolean {
  if (run.alerted) return false;
  return run.failures >= FAILING_AFTER_ATTEMPTS || (run.failures >= 2 && at - run.failingSince >= FAILING_AFTER_MS);
}

/**
 * A snoozed monitor or heartbeat is, for its alerts, in maintenance until the snooze ends: its
 * downs are held and sent then if it is still down (maintenance/decision.ts does the rest).
 */
export function snoozeWindow(until: number): WindowSchedule {
  return { starts_at: 0, ends_at: until, cron: null, duration_seconds: null, timezone: 'UTC', active: true };
}
