import { requireProject, type Principal } from '../accounts/bearer.ts';
import type { ApiContext } from '../platform/http/context.ts';
import type { PageQuery } from '../platform/http/pagination.ts';
import * as repo from './history-repo.ts';
import { requireMonitor } from './service.ts';

export { chartRanges, type ChartRange, type DayUptime, type OpenIncident, type Series, type SparkPoint } from './history-repo.ts';

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

/** The project's ongoing incidents, newest first. */
export async function projectOpenIncidents(ctx: ApiContext, p: Principal, projectId: string) {
  requireProject(p, projectId);
  return repo.openIncidents(ctx.sql, [projectId]);
}
