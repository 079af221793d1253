import type { Principal } from '../accounts/bearer.ts';
import * as heartbeats from '../heartbeats/service.ts';
import * as monitors from '../monitors/service.ts';
import type { ApiContext } from '../platform/http/context.ts';
import * as repo from './badges-repo.ts';

export type { BadgeSubject, FoundBadge } from './badges-repo.ts';

/**
 * Public SVG badges of one monitor or heartbeat. Who may see and change a subject may make and
 * remove its badge; the badge itself is public to whoever has its address.
 */

/** 404 unless the monitor or heartbeat is one the principal can see. */
async function requireSubject(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<void> {
  if ('monitorId' in s) await monitors.getMonitor(ctx, p, s.monitorId);
  else await heartbeats.getHeartbeat(ctx, p, s.heartbeatId);
}

/** The address of the subject's badge; null when it has none, or is not the principal's. */
export async function badgeSlug(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<string | null> {
  return repo.badgeSlugIn(ctx.sql, s, [...p.projectIds]);
}

/** The subject's badge, made when missing; its address. */
export async function createBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<string> {
  await requireSubject(ctx, p, s);
  return repo.createBadge(ctx.sql, s);
}

export async function deleteBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<void> {
  await requireSubject(ctx, p, s);
  await repo.deleteBadge(ctx.sql, s);
}

/** What a badge address shows, and the project it belongs to: public, the address is the secret. */
export async function findBadge(ctx: ApiContext, slug: string): Promise<repo.FoundBadge | undefined> {
  return repo.findBadge(ctx.sql, slug);
}
