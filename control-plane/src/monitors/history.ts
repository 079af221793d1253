import { requireProject, type Principal } from '../accounts/bearer.ts';
import { notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import * as repo from './history-repo.ts';
import { requireMonitor } from './service.ts';

export {
  chartRanges,
  type ChartRange,
  type DayUptime,
  type OpenIncident,
  type PublicIncident,
  type Series,
  type SparkPoint,
  type UptimeWindows,
} from './history-repo.ts';
export { causeKinds, type CauseKind } from './cause-kind.ts';

// A monitor's history, for the API and the front ends: each read checks that the monitor (or the
// project) is the principal's, as the monitor itself is checked (404 for anyone else's).

export async function monitorResults(ctx: ApiContext, p: Principal, id: string, region: string | undefined, page: PageQuery) {
  await requireMonitor(ctx, p, id);
  return repo.listResults(ctx.sql, id, region, page);
}

export async function monitorIncidents(ctx: ApiContext, p: Principal, id: string, page: PageQuery) {
  await requireMonitor(ctx, p, id);
  return repo.listIncidents(ctx.sql, id, page, ctx.now());
}

/** Response time per region over a range (the monitor page's chart). */
export async function monitorChart(ctx: ApiContext, p: Principal, id: string, range: repo.ChartRange) {
  await requireMonitor(ctx, p, id);
  return repo.responseSeries(ctx.sql, id, range, ctx.now());
}

/** When the monitor's checks of the last 24 hours start and end (null: none), to open its chart on a range with data. */
export async function monitorRecentSpan(ctx: ApiContext, p: Principal, id: string) {
  await requireMonitor(ctx, p, id);
  return repo.recentSpan(ctx.sql, id, ctx.now());
}

/** The latest checks of each of these monitors of the project, for sparklines. */
export async function projectSparklines(ctx: ApiContext, p: Principal, projectId: string, monitorIds: readonly string[]) {
  requireProject(p, projectId);
  return repo.sparklines(ctx.sql, projectId, monitorIds, ctx.now());
}

/** Uptime per UTC day of these monitors of the project (the status page's bars). */
export async function projectDailyUptime(ctx: ApiContext, p: Principal, projectId: string, monitorIds: readonly string[], days: number) {
  requireProject(p, projectId);
  return repo.dailyUptime(ctx.sql, projectId, monitorIds, ctx.now(), days);
}

/** Uptime over 24 hours, 7 days and 30 days of these monitors of the project (the dashboard's list), one query. */
export async function projectUptimeWindows(ctx: ApiContext, p: Principal, projectId: string, monitorIds: readonly string[]) {
  requireProject(p, projectId);
  return repo.uptimeWindows(ctx.sql, projectId, monitorIds, ctx.now());
}

/**
 * The incidents of these monitors of the project over the last `days` UTC days, oldest first, as
 * a public page may show them: times and the kind of cause, not its text.
 */
export async function projectRecentIncidents(
  ctx: ApiContext,
  p: Principal,
  projectId: string,
  monitorIds: readonly string[],
  days: number,
) {
  requireProject(p, projectId);
  return repo.recentIncidents(ctx.sql, projectId, monitorIds, ctx.now(), days);
}

/** Uptime of one monitor of the project over the trailing `seconds`, percent (a badge's). */
export async function monitorUptimeOver(ctx: ApiContext, p: Principal, projectId: string, id: string, seconds: number) {
  requireProject(p, projectId);
  const uptime = await repo.uptimeOver(ctx.sql, projectId, id, seconds, ctx.now());
  if (uptime === undefined) throw notFound();
  return uptime;
}

/** Mean or 95th percentile response time of a monitor's successful checks over the trailing `seconds`, ms; null without one. */
export async function monitorResponseTime(ctx: ApiContext, p: Principal, id: string, seconds: number, stat: 'avg' | 'p95') {
  await requireMonitor(ctx, p, id);
  return repo.responseTime(ctx.sql, id, seconds, stat, ctx.now());
}

/** The project's ongoing incidents, newest first. */
export async function projectOpenIncidents(ctx: ApiContext, p: Principal, projectId: string) {
  requireProject(p, projectId);
  return repo.openIncidents(ctx.sql, [projectId]);
}
