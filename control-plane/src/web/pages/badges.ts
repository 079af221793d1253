import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import * as monitors from '../../monitors/service.ts';
import { badgeSvg, renderBadge } from '../badge-svg.ts';
import { endpointJson, parseBadge, type Badge, type BadgeKind, type BadgeRequest } from '../../status-pages/badge-values.ts';
import {
  badgeTarget,
  createBadge,
  deleteBadge,
  drawBadge,
  figureMemo,
  findBadge,
  pageComponentTarget,
  type BadgeSubject,
  type BadgeTarget,
} from '../../status-pages/badges.ts';
import { copyRow, formatUptime, monitorStatusName, postButton } from '../components.ts';
import { idParam, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { projectPrincipal } from '../public-principal.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';
import { pageAccessAt } from '../../status-pages/service.ts';
import { PRIVATE_CACHE_CONTROL, type StatusPageAccess } from './status-page-access.ts';
import { isUuid } from '../../../../shared/src/uuid.ts';

/** What a badge card offers of a kind: its file, a heading, and the alt text of its image. */
const cardKinds = [
  { file: 'status', heading: 'Status', alt: 'status', types: ['monitor', 'heartbeat'] },
  { file: 'uptime', heading: 'Uptime over 30 days', alt: 'uptime over 30 days', types: ['monitor', 'heartbeat'] },
  { file: 'response', heading: 'Average response time over 24 hours', alt: 'average response time over 24 hours', types: ['monitor'] },
] as const;

/** The "Public badges" card of a monitor or heartbeat page: create, show with snippets to copy, remove. */
export function badgeCard(
  deps: WebDeps,
  csrf: string,
  base: string,
  slug: string | null,
  subject: { type: 'monitor' | 'heartbeat'; name: string },
): Html {
  if (!slug) {
    return html`<div class="card">
      <div class="card-head"><h2>Public badges</h2></div>
      <div class="card-body">
        <p class="muted">
          SVG images of the current status, the uptime${subject.type === 'monitor' ? ' and the response time' : ''} at a secret address, for
          a README or a wiki. Anyone with the address can see the name and these figures, nothing else.
        </p>
        ${postButton({ action: `${base}/badge`, label: 'Create badges', csrf })}
      </div>
    </div>`;
  }
  const publicUrl = (file: string) => `${deps.ctx.config.PUBLIC_URL}${urls.badgeFile(slug, file)}`;
  const kinds = cardKinds.filter((k) => (k.types as readonly string[]).includes(subject.type));
  return html`<div class="card" data-testid="badges">
    <div class="card-head">
      <h2>Public badges</h2>
      ${postButton({ action: `${base}/badge/delete`, label: 'Remove', csrf, kind: 'danger', small: true, confirm: 'Remove the badges? Their addresses stop working.' })}
    </div>
    <div class="card-body">
      ${kinds.map((k) => {
        const url = publicUrl(`${k.file}.svg`);
        const alt = `${subject.name} ${k.alt}`;
        return html`<h3>${k.heading}</h3>
          <p><img src="${urls.badgeFile(slug, `${k.file}.svg`)}" alt="${alt}" height="20" data-badge="${k.file}" /></p>
          ${copyRow(`![${alt}](${url})`, 'Copy Markdown')} ${copyRow(`<img src="${url}" alt="${alt}" height="20">`, 'Copy HTML')}`;
      })}
      <details class="badge-more">
        <summary>Shields endpoint and options</summary>
        <p class="muted">
          Each badge is also Shields endpoint JSON (<code>.json</code> for <code>.svg</code>), for a badge drawn by shields.io in any of its
          styles:
        </p>
        ${copyRow(`https://img.shields.io/endpoint?url=${encodeURIComponent(publicUrl('status.json'))}`, 'Copy', 'shields-url')}
        <p class="muted">
          Options in the query: <code>window=24h</code>, <code>7d</code>, <code>30d</code> or <code>90d</code> (uptime and response
          time)${subject.type === 'monitor' ? html`, <code>stat=p95</code> (the 95th percentile response time)` : ''},
          <code>label=</code> (the left text; empty for none). The first address, <code>${urls.badge(slug)}</code>, keeps working.
        </p>
      </details>
    </div>
  </div>`;
}

/** Seconds a badge may be kept by a cache: a status is read often and changes; figures over days move slowly. */
const maxAge: Record<BadgeKind, number> = { status: 30, uptime: 300, response: 300 };

const text = (reply: FastifyReply, status: number, message: string) =>
  reply.code(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(message);

/** The request's If-None-Match names this entity tag (or any). */
function fresh(req: FastifyRequest, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/** A badge's body with its entity tag (a hash of the body): 304 when the cache has it already. */
function sendBody(req: FastifyRequest, reply: FastifyReply, body: string, type: string, cacheControl: string): FastifyReply {
  void reply.header('cache-control', cacheControl);
  // A private page's badge is checked on every request: no validator to answer 304 with.
  if (cacheControl === PRIVATE_CACHE_CONTROL) return reply.type(type).send(body);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  void reply.header('etag', etag);
  if (fresh(req, etag)) return reply.code(304).send();
  return reply.type(type).send(body);
}

function sendBadge(
  req: FastifyRequest,
  reply: FastifyReply,
  request: BadgeRequest,
  badge: Badge,
  cacheControl = `public, max-age=${maxAge[request.kind]}`,
): FastifyReply {
  if (request.format === 'svg') return sendBody(req, reply, renderBadge(badge), 'image/svg+xml; charset=utf-8', cacheControl);
  // Shields reads it from its servers; a page's script may read it too.
  void reply.header('access-control-allow-origin', '*');
  return sendBody(req, reply, JSON.stringify(endpointJson(badge)), 'application/json; charset=utf-8', cacheControl);
}

/** How long an uptime or a response time is reused, in this process, for every request of that badge (whatever its query). */
const FIGURES_FRESH_MS = 60_000;

const slugPattern = /^[A-Za-z0-9_-]{22}$/;

export function badgeRoutes(app: App, deps: WebDeps, access: StatusPageAccess): void {
  const { ctx } = deps;
  const figures = figureMemo({ ttlMs: FIGURES_FRESH_MS, max: 10_000, now: () => ctx.now().getTime() });

  app.get('/badge/:file', async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const slug = /^([A-Za-z0-9_-]{22})\.svg$/.exec(file)?.[1];
    const badge = slug ? await findBadge(ctx, slug) : undefined;
    if (!badge) return text(reply, 404, 'Not found');
    const principal = projectPrincipal(badge.project_id);
    let svg: string;
    if (badge.monitor_id) {
      const m = await monitors.getMonitor(ctx, principal, badge.monitor_id);
      svg = badgeSvg(m.name, monitorStatusName(m.status), m.active ? formatUptime(m.uptime) : undefined);
    } else {
      const h = await heartbeats.getHeartbeat(ctx, principal, badge.heartbeat_id!);
      svg = badgeSvg(h.name, h.status);
    }
    // Image proxies (GitHub's camo) cache unless told not to; this first badge says so, and is revalidated each time.
    return sendBody(req, reply, svg, 'image/svg+xml; charset=utf-8', 'no-cache, max-age=0, must-revalidate');
  });

  /** The address parsed, then the target found, then the badge drawn: each step may answer a short text instead. */
  async function answer(
    req: FastifyRequest,
    reply: FastifyReply,
    find: () => Promise<BadgeTarget | undefined>,
    file: string,
    cacheControl?: string,
  ) {
    const parsed = parseBadge(file, (req.query ?? {}) as Record<string, unknown>);
    if (!parsed.ok) return text(reply, parsed.status, parsed.message);
    const target = await find();
    if (!target) return text(reply, 404, 'No badge at this address.');
    const drawn = await drawBadge(ctx, target, parsed.request, figures);
    if (!drawn.ok) return text(reply, drawn.status, drawn.message);
    return sendBadge(req, reply, parsed.request, drawn.badge, cacheControl);
  }

  app.get('/badge/:slug/:file', async (req, reply) => {
    const { slug, file } = req.params as { slug: string; file: string };
    return answer(req, reply, async () => (slugPattern.test(slug) ? badgeTarget(ctx, slug) : undefined), file);
  });

  // A status page is public already: the badges of what it shows are addressed through it.
  app.get('/status/:slug/badge/:component/:file', async (req, reply) => {
    const { slug, component, file } = req.params as { slug: string; component: string; file: string };
    // A private page's badges are as private as the page (ADR 0041).
    const page = slugPattern.test(slug) ? await pageAccessAt(ctx, slug) : undefined;
    const gate = await access.check(req, reply, slug, page?.access ?? null, 'data');
    if (gate === 'refused') return reply;
    return answer(
      req,
      reply,
      async () => (slugPattern.test(slug) && isUuid(component) ? pageComponentTarget(ctx, slug, component.toLowerCase()) : undefined),
      file,
      gate === 'granted' ? PRIVATE_CACHE_CONTROL : undefined,
    );
  });
}

/** Creating and removing badges (signed in, with the session's CSRF token). */
export function badgeActionRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  for (const kind of ['monitors', 'heartbeats'] as const) {
    const subject = (id: string): BadgeSubject => (kind === 'monitors' ? { monitorId: id } : { heartbeatId: id });
    const page = (id: string) => (kind === 'monitors' ? urls.monitor(id) : urls.heartbeat(id));

    app.post(`/app/${kind}/:id/badge`, async (req, reply) => {
      const id = idParam(req);
      await createBadge(ctx, sessionOf(req).principal, subject(id));
      await setFlash(ctx.sql, sessionOf(req).id, 'Badges created.');
      return reply.redirect(page(id), 303);
    });

    app.post(`/app/${kind}/:id/badge/delete`, async (req, reply) => {
      const id = idParam(req);
      await deleteBadge(ctx, sessionOf(req).principal, subject(id));
      await setFlash(ctx.sql, sessionOf(req).id, 'Badges removed; their addresses no longer work.');
      return reply.redirect(page(id), 303);
    });
  }
}
