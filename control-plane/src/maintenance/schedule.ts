import { CronExpressionParser } from 'cron-parser';
import { cronFields } from '../heartbeats/schedule.ts';
import { offsetAt } from '../platform/time-zone.ts';

/**
 * When a maintenance window covers its subjects, as pure functions of its definition and an
 * instant (milliseconds since the epoch). Occurrences are half-open, [start, end).
 *
 * - One-off: [starts_at, ends_at).
 * - Recurring: each time the 5-field cron expression fires in `timezone`, for `duration_seconds`
 *   of elapsed time. Across daylight-saving changes the cron expression is read in local time
 *   (cron-parser): a start inside a spring-forward gap moves forward by the gap (02:30 on the
 *   night Europe/Berlin skips 02:00-03:00 starts at 03:30 CEST), and a wall-clock time inside a
 *   fall-back repeat starts the window once, on its first pass (02:30 CEST, not again at 02:30 CET).
 *
 * Occurrences that overlap or touch (of one window, or of several) form one run: the subjects
 * are in maintenance from the run's start to its end, without a boundary in between.
 */
export interface WindowSchedule {
  starts_at: number | null;
  ends_at: number | null;
  cron: string | null;
  duration_seconds: number | null;
  timezone: string;
  active: boolean;
  /** Occurrences are not looked at before this instant (a window created at 10:05 does not reach back to 10:00). */
  not_before?: number;
}

export interface Occurrence {
  start: number;
  end: number;
}

/** Runs chained further than this are cut here; the boundary is simply looked at again then. */
const MAX_CHAIN = 500;

function cronIterator(w: WindowSchedule, from: number) {
  return CronExpressionParser.parse(cronFields(w.cron!), { currentDate: new Date(from), tz: w.timezone });
}

/**
 * A start on the second pass of a fall-back repeat (02:30 CET after 02:30 CEST): the wall-clock
 * time already came once, so it does not start the window again. cron-parser yields such an
 * instant when asked from inside the repeat, and not when asked from before it.
 */
function secondPass(tz: string, s: number): boolean {
  const before = offsetAt(tz, s - 3 * 3_600_000);
  const after = offsetAt(tz, s);
  return before > after && offsetAt(tz, s - (before - after)) === before;
}

/** The starts of a recurring window strictly after `after`, in order. */
function* cronStarts(w: WindowSchedule, after: number): Generator<number> {
  const it = cronIterator(w, after);
  for (;;) {
    const s = it.next().getTime();
    if (!secondPass(w.timezone, s)) yield s;
  }
}

/** The first start strictly after `after`, or null when there is none. */
export function firstStartAfter(w: WindowSchedule, after: number): number | null {
  if (!w.active) return null;
  const from = Math.max(after, (w.not_before ?? -Infinity) - 1);
  if (w.cron === null) return w.starts_at !== null && w.starts_at > from ? w.starts_at : null;
  try {
    return cronStarts(w, from).next().value ?? null;
  } catch {
    return null;
  }
}

/** The latest start at or before `t` (recurring windows only). */
function latestStartAtOrBefore(w: WindowSchedule, t: number): number | null {
  // cron-parser's prev() only finds a place to begin: around daylight-saving changes it answers
  // a second pass (see secondPass) or skips the start a spring-forward gap moved to the day
  // before. From there, the starts next() yields are walked to the last one still <= t.
  try {
    let candidate = cronIterator(w, t + 1)
      .prev()
      .getTime();
    for (let i = 0; i < 4 && secondPass(w.timezone, candidate); i++) candidate = cronIterator(w, candidate).prev().getTime();
    let n = 0;
    for (const next of cronStarts(w, candidate)) {
      if (next > t || ++n > MAX_CHAIN) break;
      candidate = next;
    }
    return candidate <= t ? candidate : null;
  } catch {
    return null;
  }
}

/** The occurrence that covers `t` (the latest-starting one when several do), or null. */
export function occurrenceAt(w: WindowSchedule, t: number): Occurrence | null {
  if (!w.active || t < (w.not_before ?? -Infinity)) return null;
  if (w.cron === null) {
    return w.starts_at !== null && w.ends_at !== null && w.starts_at <= t && t < w.ends_at ? { start: w.starts_at, end: w.ends_at } : null;
  }
  const start = latestStartAtOrBefore(w, t);
  if (start === null) return null;
  const end = start + w.duration_seconds! * 1000;
  return t < end ? { start, end } : null;
}

/** The run of this window's occurrences that covers `t`: when it started and when it ends; null when none covers `t`. */
export function runAt(w: WindowSchedule, t: number): Occurrence | null {
  const first = occurrenceAt(w, t);
  if (!first) return null;
  if (w.cron === null) return first;
  let end = first.end;
  let last = first.start;
  for (let i = 0; i < MAX_CHAIN; i++) {
    const next = firstStartAfter(w, last);
    if (next === null || next > end) break;
    end = Math.max(end, next + w.duration_seconds! * 1000);
    last = next;
  }
  return { start: first.start, end };
}

/** The next instant after `t` at which the window starts or ends (null: never again). */
export function nextBoundary(w: WindowSchedule, t: number): number | null {
  const run = runAt(w, t);
  if (run) return run.end;
  return firstStartAfter(w, t);
}

/** The run in progress at `t`, else the next one to start; null when there is none. */
export function currentOrNextRun(w: WindowSchedule, t: number): Occurrence | null {
  const run = runAt(w, t);
  if (run) return run;
  const start = firstStartAfter(w, t);
  return start === null ? null : runAt(w, start);
}

/**
 * When maintenance ends for a subject that these windows cover, if it is in maintenance at `t`:
 * the end of the run containing `t`, following overlapping and touching runs of the other windows
 * too. Null when no window covers `t`.
 */
export function maintenanceUntil(windows: readonly WindowSchedule[], t: number): number | null {
  let until: number | null = null;
  for (const w of windows) {
    const run = runAt(w, t);
    if (run && (until === null || run.end > until)) until = run.end;
  }
  if (until === null) return null;
  for (let i = 0; i < MAX_CHAIN; i++) {
    let extended = false;
    for (const w of windows) {
      const run = runAt(w, until);
      if (run && run.end > until) {
        until = run.end;
        extended = true;
      }
    }
    if (!extended) break;
  }
  return until;
}

/** What the boundary worker does with a window at one of its boundaries. */
export interface BoundaryStep {
  /** The public event this boundary is, if any. */
  event: 'maintenance.started' | 'maintenance.ended' | null;
  /** The run in progress from this boundary on, recorded as an occurrence (null: none). */
  run: Occurrence | null;
  /** The stored state after the step. */
  active_until: number | null;
  next_boundary_at: number | null;
}

/**
 * The step at boundary `at` of a window whose stored state says it was in a run until
 * `activeUntil` (null: not in one). Also what an edit leads to: the boundary worker looks at an
 * edited window at the instant of the edit, and a window edited in the middle of a run keeps its
 * run (no event) when it still covers that instant.
 */
export function boundaryStep(w: WindowSchedule, activeUntil: number | null, at: number): BoundaryStep {
  const run = runAt(w, at);
  const wasActive = activeUntil !== null;
  const event = !wasActive && run ? 'maintenance.started' : wasActive && !run ? 'maintenance.ended' : null;
  return {
    event,
    run: run ? { start: Math.max(run.start, at), end: run.end } : null,
    active_until: run ? run.end : null,
    next_boundary_at: run ? run.end : firstStartAfter(w, at),
  };
}
