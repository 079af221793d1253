import type { Principal } from '../accounts/bearer.ts';
import { notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import * as pings from './pings/repo.ts';
import type { PingLogEntry } from './pings/schemas.ts';
import { pingLogEntry } from './pings/service.ts';
import { statusChanges, type StatusChange } from './timeline-repo.ts';

export type { StatusChange } from './timeline-repo.ts';

/**
 * A heartbeat's event log, as Healthchecks shows one: its pings (with how long a run took when a
 * /start came before its end) and its status changes, newest first.
 */
export type TimelineEntry =
  | ({
      type: 'ping';
      at: string;
      /** Seconds since the /start this completion ends; null when none came before it. */ duration: number | null;
    } & PingLogEntry)
  | ({ type: 'change' } & StatusChange);

/**
 * Merges pings and status changes (each newest first) into one log of at most `limit` entries,
 * newest first. A completion's duration is the one the rules measured (its run's /start, by run
 * id); a completion logged before the rules measured runs (no outcome) right after a /start (no
 * other completion between) is that run's end: its duration is the time between the two.
 */
export function buildTimeline(log: readonly PingLogEntry[], changes: readonly StatusChange[], limit: number): TimelineEntry[] {
  const withDurations: TimelineEntry[] = [];
  let started: number | null = null;
  for (const p of [...log].reverse()) {
    const at = Date.parse(p.received_at);
    let duration: number | null = null;
    if (p.kind === 'start') started = at;
    else {
      if (p.outcome !== null) duration = p.duration_seconds;
      else if (started !== null) duration = Math.max(0, (at - started) / 1000);
      started = null;
    }
    withDurations.push({ type: 'ping', at: p.received_at, duration, ...p });
  }
  const entries: TimelineEntry[] = [...withDurations, ...changes.map((c) => ({ type: 'change' as const, ...c }))];
  // Newest first; at the same instant the change after the ping that caused it.
  entries.sort((a, b) => Date.parse(b.at) - Date.parse(a.at) || (a.type === b.type ? 0 : a.type === 'change' ? -1 : 1));
  return entries.slice(0, limit);
}

/**
 * The heartbeat's latest `limit` log entries (404 unless it is the principal's). Reading the
 * latest `limit` of each kind is enough: an entry not among its kind's latest `limit` has at least
 * `limit` newer entries.
 */
export async function heartbeatTimeline(ctx: ApiContext, p: Principal, heartbeatId: string, limit: number): Promise<TimelineEntry[]> {
  if (!(await pings.heartbeatVisible(ctx.sql, heartbeatId, [...p.projectIds]))) throw notFound();
  const [{ rows }, changes] = await Promise.all([
    pings.listPings(ctx.sql, heartbeatId, { page: 1, per_page: limit }),
    statusChanges(ctx.sql, heartbeatId, limit),
  ]);
  return buildTimeline(rows.map(pingLogEntry), changes, limit);
}
