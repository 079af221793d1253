import { maintenanceUntil, type WindowSchedule } from './schedule.ts';

/** What the router does with one alert event. */
export type AlertDecision =
  /** Make its deliveries now. */
  | { action: 'route' }
  /** Keep it (a row of held_alerts) until `until`, the end of the maintenance it occurred in. */
  | { action: 'hold'; until: number }
  /** Send nothing: an up whose down was never sent; that down is settled with it. */
  | { action: 'drop' };

export interface AlertFacts {
  /** down or up, whatever the subject (monitor or heartbeat). */
  direction: 'down' | 'up';
  /** The event's own occurred_at (never the time it is routed: a replay decides the same). */
  occurredAt: number;
  /** The windows of the project that cover the event's subject. */
  windows: readonly WindowSchedule[];
  /** For an up: its down was held and never sent (still held, or dropped at the window's end). */
  downUnsent: boolean;
}

/**
 * The maintenance rule for an alert: a down that occurs inside a window is held until the window
 * ends; an up is sent exactly when its down was (so an outage that begins and ends inside a
 * window sends nothing, and one that began before the window still gets its recovery).
 */
export function decideAlert(f: AlertFacts): AlertDecision {
  if (f.direction === 'up') return f.downUnsent ? { action: 'drop' } : { action: 'route' };
  const until = maintenanceUntil(f.windows, f.occurredAt);
  return until === null ? { action: 'route' } : { action: 'hold', until };
}

/** What becomes of a held down when its release time has come. */
export type ReleaseDecision =
  /** Still down after the maintenance: make its deliveries now. */
  | { action: 'release' }
  /** It recovered meanwhile: nothing is sent (its up, when routed, is dropped too). */
  | { action: 'drop' }
  /** A window (a new one, or one edited) still covers the subject: wait until then. */
  | { action: 'postpone'; until: number };

/**
 * Judged at the held row's own release time, not the wall clock: a release processed late (a
 * restart) decides as one on time would have.
 */
export function decideRelease(f: { releaseAt: number; windows: readonly WindowSchedule[]; stillDown: boolean }): ReleaseDecision {
  const until = maintenanceUntil(f.windows, f.releaseAt);
  if (until !== null && until > f.releaseAt) return { action: 'postpone', until };
  return f.stillDown ? { action: 'release' } : { action: 'drop' };
}
