import type { Principal } from '../accounts/bearer.ts';
import { heartbeatUptimeOver } from '../heartbeats/uptime.ts';
import * as heartbeats from '../heartbeats/service.ts';
import type { HeartbeatStatus } from '../heartbeats/state.ts';
import { announcements } from '../maintenance/service.ts';
import { monitorResponseTime, monitorUptimeOver } from '../monitors/history.ts';
import * as monitors from '../monitors/service.ts';
import type { ApiContext } from '../platform/http/context.ts';
import {
  badgeLabel,
  badgeStatus,
  badgeWindows,
  responseBadge,
  statusBadge,
  uptimeBadge,
  type Badge,
  type BadgeRequest,
} from './badge-values.ts';
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

/** Whether the subject had a badge. */
export async function deleteBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<boolean> {
  await requireSubject(ctx, p, s);
  return repo.deleteBadge(ctx.sql, s);
}

/** What a badge address shows, and the project it belongs to: public, the address is the secret. */
export async function findBadge(ctx: ApiContext, slug: string): Promise<repo.FoundBadge | undefined> {
  return repo.findBadge(ctx.sql, slug);
}

/** What a badge is drawn of: a monitor or heartbeat of a project, and the name a status page gives it. */
export interface BadgeTarget {
  projectId: string;
  subject: { type: 'monitor' | 'heartbeat'; id: string };
  /** null: its own name. */
  displayName: string | null;
}

/** A principal that sees exactly the project (public addresses read through the services as it). */
const projectPrincipal = (projectId: string): Principal => ({
  userId: 'public',
  tokenId: 'public',
  organizationIds: new Set(),
  ownedOrganizationIds: new Set(),
  projectIds: new Set([projectId]),
});

/** The target of a badge address (`/badge/<slug>/...`). */
export async function badgeTarget(ctx: ApiContext, slug: string): Promise<BadgeTarget | undefined> {
  const b = await repo.findBadge(ctx.sql, slug);
  if (!b) return undefined;
  const subject = b.monitor_id ? { type: 'monitor' as const, id: b.monitor_id } : { type: 'heartbeat' as const, id: b.heartbeat_id! };
  return { projectId: b.project_id, subject, displayName: null };
}

/**
 * A component of a public status page, by the id the API gives it (its monitor's or heartbeat's):
 * one of its groups' components, or, on a page without groups, any monitor or heartbeat of the
 * project. Undefined when the page shows no such thing.
 */
export async function pageComponentTarget(ctx: ApiContext, pageSlug: string, componentId: string): Promise<BadgeTarget | undefined> {
  const found = await repo.findPageComponent(ctx.sql, pageSlug, componentId);
  if (!found) return undefined;
  const { project_id: projectId, component } = found;
  if (component) return { projectId, subject: { type: component.type, id: component.id }, displayName: component.display_name };
  if (found.configured) return undefined;
  const p = projectPrincipal(projectId);
  if ((await monitors.monitorStates(ctx, p, projectId, [componentId])).length > 0) {
    return { projectId, subject: { type: 'monitor', id: componentId }, displayName: null };
  }
  if ((await heartbeats.heartbeatStates(ctx, p, projectId, [componentId])).length > 0) {
    return { projectId, subject: { type: 'heartbeat', id: componentId }, displayName: null };
  }
  return undefined;
}

export type BadgeAnswer = { ok: true; badge: Badge } | { ok: false; status: 400 | 404; message: string };

/** Gives a figure by its key: computed once, then the same while it is fresh. */
export type FigureMemo = (key: string, compute: () => Promise<number | null>) => Promise<number | null>;

/**
 * Remembers figures over days (uptime, response time) for `ttlMs`, at most `max` of them (the
 * oldest go first): a p95 over 30 days sorts a month of checks, and a public address, whatever its
 * query, must not be a lever on the database. Requests that come while one is computed share it;
 * a failure is not remembered.
 */
export function figureMemo(opts: { ttlMs: number; max: number; now: () => number }): FigureMemo {
  const entries = new Map<string, { at: number; value: Promise<number | null> }>();
  return (key, compute) => {
    const t = opts.now();
    const hit = entries.get(key);
    if (hit && t - hit.at < opts.ttlMs) return hit.value;
    entries.delete(key);
    while (entries.size >= opts.max) entries.delete(entries.keys().next().value!);
    const entry = { at: t, value: compute() };
    entries.set(key, entry);
    entry.value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return entry.value;
  };
}

const computeNow: FigureMemo = (_key, compute) => compute();

/** Whether a maintenance window covers the subject now, as its status page reads it. */
async function inMaintenance(ctx: ApiContext, t: BadgeTarget): Promise<boolean> {
  return (await announcements(ctx, t.projectId)).some(
    (a) =>
      a.in_progress &&
      (a.monitor_ids === null || (t.subject.type === 'monitor' ? a.monitor_ids : (a.heartbeat_ids ?? [])).includes(t.subject.id)),
  );
}

/** A badge of the target as asked: its status in the status page's words, its uptime or its response time over the window. */
export async function drawBadge(ctx: ApiContext, t: BadgeTarget, request: BadgeRequest, figures = computeNow): Promise<BadgeAnswer> {
  const p = projectPrincipal(t.projectId);
  const { type, id } = t.subject;
  const [state] =
    type === 'monitor'
      ? await monitors.monitorStates(ctx, p, t.projectId, [id])
      : await heartbeats.heartbeatStates(ctx, p, t.projectId, [id]);
  // Deleted since its address was read.
  if (!state) return { ok: false, status: 404, message: 'No badge at this address.' };
  const label = badgeLabel(request, t.displayName ?? state.name);
  const seconds = badgeWindows[request.window];
  if (request.kind === 'status') {
    const in_maintenance = await inMaintenance(ctx, t);
    const status =
      type === 'monitor'
        ? badgeStatus({ type, status: Number(state.status), in_maintenance })
        : badgeStatus({ type, status: state.status as HeartbeatStatus, in_maintenance });
    return { ok: true, badge: statusBadge(label, status) };
  }
  if (request.kind === 'uptime') {
    const uptime = await figures(`${type}:${id}:uptime:${request.window}`, () =>
      type === 'monitor' ? monitorUptimeOver(ctx, p, t.projectId, id, seconds) : heartbeatUptimeOver(ctx, p, t.projectId, id, seconds),
    );
    return { ok: true, badge: uptimeBadge(label, uptime) };
  }
  if (type === 'heartbeat') return { ok: false, status: 404, message: 'A heartbeat has no response time: use status or uptime.' };
  const kept = ctx.config.RESULTS_RETENTION_DAYS;
  if (seconds > kept * 86_400) {
    const fit = Object.entries(badgeWindows)
      .filter(([, s]) => s <= kept * 86_400)
      .map(([w]) => w);
    return { ok: false, status: 400, message: `window: checks are kept ${kept} days; use ${fit.join(', ') || 'a shorter window'}.` };
  }
  const ms = await figures(`${type}:${id}:response:${request.window}:${request.stat}`, () =>
    monitorResponseTime(ctx, p, id, seconds, request.stat),
  );
  return { ok: true, badge: responseBadge(label, ms) };
}
