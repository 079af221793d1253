import type { App } from '../../platform/http/context.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import * as monitors from '../../monitors/service.ts';
import { badgeSvg } from '../badge-svg.ts';
import { createBadge, deleteBadge, findBadge, type BadgeSubject } from '../../status-pages/badges.ts';
import { copyRow, formatUptime, monitorStatusName, postButton } from '../components.ts';
import { idParam, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { projectPrincipal } from '../public-principal.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';

/** The "Public badge" card of a monitor or heartbeat page: create, show, remove. */
export function badgeCard(deps: WebDeps, csrf: string, base: string, slug: string | null): Html {
  if (!slug) {
    return html`<div class="card">
      <div class="card-head"><h2>Public badge</h2></div>
      <div class="card-body">
        <p class="muted">
          An SVG image of the current status at a secret address, for a README or a wiki. Anyone with the address can see the name and
          status, nothing else.
        </p>
        ${postButton({ action: `${base}/badge`, label: 'Create badge', csrf })}
      </div>
    </div>`;
  }
  const url = `${deps.ctx.config.PUBLIC_URL}${urls.badge(slug)}`;
  return html`<div class="card">
    <div class="card-head">
      <h2>Public badge</h2>
      ${postButton({ action: `${base}/badge/delete`, label: 'Remove', csrf, kind: 'danger', small: true, confirm: 'Remove the badge? Its address stops working.' })}
    </div>
    <div class="card-body">
      <p><img src="${urls.badge(slug)}" alt="Status badge" height="20" /></p>
      ${copyRow(url)} ${copyRow(`![status](${url})`, 'Copy Markdown')}
    </div>
  </div>`;
}

export function badgeRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get('/badge/:file', async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const slug = /^([A-Za-z0-9_-]{22})\.svg$/.exec(file)?.[1];
    const badge = slug ? await findBadge(ctx, slug) : undefined;
    if (!badge) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    const principal = projectPrincipal(badge.project_id);
    let svg: string;
    if (badge.monitor_id) {
      const m = await monitors.getMonitor(ctx, principal, badge.monitor_id);
      svg = badgeSvg(m.name, monitorStatusName(m.status), m.active ? formatUptime(m.uptime) : undefined);
    } else {
      const h = await heartbeats.getHeartbeat(ctx, principal, badge.heartbeat_id!);
      svg = badgeSvg(h.name, h.status);
    }
    // Image proxies (GitHub's camo) cache unless told not to; a status must stay fresh.
    return reply
      .header('content-type', 'image/svg+xml; charset=utf-8')
      .header('cache-control', 'no-cache, max-age=0, must-revalidate')
      .send(svg);
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
      await setFlash(ctx.sql, sessionOf(req).id, 'Badge created.');
      return reply.redirect(page(id), 303);
    });

    app.post(`/app/${kind}/:id/badge/delete`, async (req, reply) => {
      const id = idParam(req);
      await deleteBadge(ctx, sessionOf(req).principal, subject(id));
      await setFlash(ctx.sql, sessionOf(req).id, 'Badge removed; its address no longer works.');
      return reply.redirect(page(id), 303);
    });
  }
}
