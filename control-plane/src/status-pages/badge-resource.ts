import { z } from 'zod';
import type { Principal } from '../accounts/bearer.ts';
import { notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import { badgeFormats, badgeKinds } from './badge-values.ts';
import * as badges from './badges.ts';
import type * as repo from './badges-repo.ts';

/**
 * A monitor's or heartbeat's public badge as the API shows it: its secret address and the URLs
 * of each badge it draws (docs/status-pages.md, "Badges"; ADR 0037).
 */

const BadgeFiles = z.object({
  svg: z.string().describe('The SVG image.'),
  json: z.string().describe('The same badge as Shields endpoint JSON.'),
});

export const PublicBadge = z
  .object({
    type: z.enum(['monitor', 'heartbeat']),
    id: z.uuid().describe('The monitor or heartbeat.'),
    slug: z.string().describe('The secret part of the addresses: whoever has it can see the name and these figures.'),
    svg_url: z.string().describe('The first address: status and 30-day uptime in one SVG.'),
    urls: z
      .object({ status: BadgeFiles, uptime: BadgeFiles, response: BadgeFiles.optional().describe('Monitors only.') })
      .describe('Each kind of badge; query options: window (24h, 7d, 30d, 90d), stat (avg, p95; response time), label.'),
  })
  .meta({ id: 'PublicBadge' });
export type PublicBadge = z.infer<typeof PublicBadge>;

function resource(ctx: ApiContext, s: repo.BadgeSubject, slug: string): PublicBadge {
  const base = `${ctx.config.PUBLIC_URL}/badge/${slug}`;
  const type = 'monitorId' in s ? ('monitor' as const) : ('heartbeat' as const);
  const files = (kind: string) => Object.fromEntries(badgeFormats.map((f) => [f, `${base}/${kind}.${f}`])) as z.infer<typeof BadgeFiles>;
  const kinds = badgeKinds.filter((k) => k !== 'response' || type === 'monitor');
  return {
    type,
    id: 'monitorId' in s ? s.monitorId : s.heartbeatId,
    slug,
    svg_url: `${base}.svg`,
    urls: Object.fromEntries(kinds.map((k) => [k, files(k)])) as PublicBadge['urls'],
  };
}

/** The subject's badge; 404 when it has none, or the subject is not the principal's. */
export async function getBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<PublicBadge> {
  const slug = await badges.badgeSlug(ctx, p, s);
  if (!slug) throw notFound();
  return resource(ctx, s, slug);
}

/** The subject's badge, made when missing (as the dashboard's button does): `created` says which. */
export async function ensureBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<{ badge: PublicBadge; created: boolean }> {
  const existing = await badges.badgeSlug(ctx, p, s);
  if (existing) return { badge: resource(ctx, s, existing), created: false };
  const slug = await badges.createBadge(ctx, p, s);
  return { badge: resource(ctx, s, slug), created: true };
}

/** Retires the subject's badge: its addresses answer 404 from now on. 404 when it has none. */
export async function removeBadge(ctx: ApiContext, p: Principal, s: repo.BadgeSubject): Promise<void> {
  if (!(await badges.deleteBadge(ctx, p, s))) throw notFound();
}
