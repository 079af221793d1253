import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import {
  projectDailyUptime,
  projectOpenIncidents,
  projectRecentIncidents,
  type DayUptime,
  type OpenIncident,
  type PublicIncident as PastOutage,
} from '../../monitors/history.ts';
import type { Announcement } from '../../maintenance/service.ts';
import type { StatusPageComponent } from '../../status-pages/schemas.ts';
import type { OverallLevel } from '../../status-pages/overall.ts';
import { publicStatusPage, type PublicStatusPage, type ShownGroup } from '../../status-pages/service.ts';
import { namesOf, publicIncidents, RECENT_DAYS, type PublicIncident } from '../../status-pages/incidents/service.ts';
import { impactPill, statusPill, timeline } from '../incident-timeline.ts';
import { uptimeBars } from '../bars.ts';
import { formatDuration, formatUptime, heartbeatPill, monitorPill, timeTag } from '../components.ts';
import type { WebDeps } from '../context.ts';
import { html, raw, type Html } from '../html.ts';
import { publicPage } from '../layout.ts';
import { projectPrincipal } from '../public-principal.ts';
import { urls } from '../urls.ts';
import type { Rendered } from '../../status-pages/snapshots.ts';
import { pageRendition, publicStatusPages, type Document, type ServeStatusPage } from './status-page-serve.ts';
import { renderStatusPageFeeds } from './status-page-feeds.ts';
import type { StatusPageAccess } from './status-page-access.ts';
import { subscribeForm } from './status-page-subscribe.ts';
import { emailSubscriptionsOpen } from '../../status-pages/subscribers/service.ts';

const DAYS = 90;

/** The banner's colour class and a shape for its level, so the level is told by words, shape and colour. */
const banners: Record<OverallLevel, { cls: string; icon: string }> = {
  operational: { cls: 'up', icon: '<path d="M5 10.5l3.2 3.2L15 7"/>' },
  maintenance: { cls: 'maintenance', icon: '<path d="M10 5.5V10l3 2"/><circle cx="10" cy="10" r="6.5"/>' },
  degraded: { cls: 'late', icon: '<path d="M10 6v5M10 14v.5"/><circle cx="10" cy="10" r="6.5"/>' },
  partial_outage: { cls: 'down', icon: '<path d="M10 3.5 17 16H3z"/><path d="M10 8.5v3.5M10 14.2v.3"/>' },
  major_outage: { cls: 'down', icon: '<path d="M6 6l8 8M14 6l-8 8"/>' },
};

function banner(level: OverallLevel, text: string): Html {
  const b = banners[level];
  return html`<div class="overall ${b.cls}" data-testid="overall" data-level="${level}">
    ${raw(
      `<svg class="overall-icon" viewBox="0 0 20 20" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">${b.icon}</svg>`,
    )}
    <strong>${text}</strong>
  </div>`;
}

function average(days: readonly DayUptime[]): number | null {
  const known = days.filter((d) => d.uptime !== null);
  return known.length === 0 ? null : known.reduce((s, d) => s + d.uptime!, 0) / known.length;
}

const shownName = (c: StatusPageComponent) => c.display_name ?? c.name;

function pill(c: StatusPageComponent): Html {
  if (c.in_maintenance) return html`<span class="pill maintenance" data-status="maintenance">Maintenance</span>`;
  return c.type === 'monitor' ? monitorPill(Number(c.status)) : heartbeatPill(String(c.status));
}

interface History {
  uptime: ReadonlyMap<string, readonly DayUptime[]>;
  past: readonly PastOutage[];
  now: Date;
}

function componentBlock(c: StatusPageComponent, h: History): Html {
  const days = c.type === 'monitor' ? (h.uptime.get(c.id) ?? []) : null;
  return html`<li class="component" data-component="${c.type}">
    <div class="component-head">
      <h3 class="component-name">${shownName(c)}</h3>
      ${pill(c)}
    </div>
    ${c.description ? html`<p class="component-description muted">${c.description}</p>` : ''}
    ${
      days
        ? html`${uptimeBars(
              days,
              h.past.filter((i) => i.monitor_id === c.id),
              h.now,
            )}
            <div class="bars-foot"><span>${DAYS} days ago</span><span>${formatUptime(average(days))} uptime</span><span>Today</span></div>`
        : ''
    }
  </li>`;
}

function groupSection(g: ShownGroup, i: number, h: History): Html {
  return html`<section class="card" aria-labelledby="group-${i}" data-group="${g.name}">
    <div class="card-head"><h2 id="group-${i}">${g.name}</h2></div>
    <ul class="components">
      ${g.components.map((c) => componentBlock(c, h))}
    </ul>
  </section>`;
}

const utc = (iso: string) => timeTag(iso, iso.slice(0, 16).replace('T', ' ') + ' UTC');

/** The affected components and when it began, in one line. */
function incidentMeta(i: PublicIncident): Html {
  return html`<div class="muted incident-meta">
    ${impactPill(i.impact)}
    ${i.components.length ? html`Affects ${i.components.join(', ')} · ` : ''}${
      i.resolved_at ? html`Resolved ${utc(i.resolved_at)}` : html`Since ${utc(i.created_at)}`
    }
  </div>`;
}

/** A written incident with its timeline, its title linking to its own page. */
export function writtenIncident(i: PublicIncident, slug: string): Html {
  return html`<li class="component incident" data-incident="${i.id}">
    <div class="component-head">
      <h3 class="component-name"><a href="${urls.statusIncident(slug, i.id)}">${i.title}</a></h3>
      ${statusPill(i.status)}
    </div>
    ${incidentMeta(i)} ${timeline(i.updates)}
  </li>`;
}

/**
 * What is wrong now: the incidents people published, then the outages of monitors the page shows
 * that no published incident tells of (named as the page names them, with when they began).
 */
function ongoing(
  written: readonly PublicIncident[],
  outages: readonly OpenIncident[],
  names: ReadonlyMap<string, string>,
  slug: string,
  now: Date,
): Html {
  const told = new Set(written.map((i) => i.monitor_incident_id).filter((id) => id !== null));
  const detected = outages.filter((o) => !told.has(o.id));
  if (written.length === 0 && detected.length === 0) return html``;
  return html`<section class="card" aria-labelledby="incidents" data-testid="incidents">
    <div class="card-head"><h2 id="incidents">Ongoing incidents</h2></div>
    <ul class="components">
      ${written.map((i) => writtenIncident(i, slug))}
      ${detected.map(
        (i) =>
          html`<li class="component" data-outage="${i.monitor_id}">
            <div class="component-head">
              <h3 class="component-name">${names.get(`monitor:${i.monitor_id}`) ?? i.monitor_name}</h3>
              <span class="pill down" data-status="down">Down</span>
            </div>
            <div class="muted">
              Since ${utc(i.started_at)} · ${formatDuration(Math.max(0, Math.floor((now.getTime() - Date.parse(i.started_at)) / 1000)))}
            </div>
          </li>`,
      )}
    </ul>
  </section>`;
}

/** Incidents resolved within the last days, below what the page shows; older ones are in its history. */
function recentlyResolved(list: readonly PublicIncident[], slug: string): Html {
  if (list.length === 0) return html``;
  return html`<section class="card" aria-labelledby="resolved" data-testid="resolved-incidents">
    <div class="card-head"><h2 id="resolved">Resolved in the last ${RECENT_DAYS} days</h2></div>
    <ul class="components">
      ${list.map((i) => writtenIncident(i, slug))}
    </ul>
  </section>`;
}

/** The heading every public page of a status page starts with: its title and description. */
export function publicHead(page: PublicStatusPage['page'], slug: string, current: boolean): Html {
  return html`<header class="public-head">
    <div>
      ${current ? html`<h1>${page.title}</h1>` : html`<p class="public-title"><a href="${urls.statusPage(slug)}">${page.title}</a></p>`}
      ${page.description ? html`<p class="muted public-description">${page.description}</p>` : ''}
    </div>
    <span class="muted">Status</span>
  </header>`;
}

/** Maintenance running now or starting within the week, with what it covers of the page (by the names shown). */
function maintenance(list: readonly Announcement[], names: ReadonlyMap<string, string>): Html {
  if (list.length === 0) return html``;
  const covered = (a: Announcement) =>
    a.monitor_ids === null
      ? 'All services'
      : [...a.monitor_ids.map((id) => `monitor:${id}`), ...(a.heartbeat_ids ?? []).map((id) => `heartbeat:${id}`)]
          .map((key) => names.get(key))
          .filter(Boolean)
          .join(', ');
  return html`<section class="card" aria-labelledby="maintenance" data-testid="maintenance">
    <div class="card-head"><h2 id="maintenance">Scheduled maintenance</h2></div>
    <ul class="components">
      ${list.map(
        (a) =>
          html`<li class="component">
            <div class="component-head">
              <h3 class="component-name">${a.name}</h3>
              <span class="pill ${a.in_progress ? 'maintenance' : 'paused'}">${a.in_progress ? 'In progress' : 'Scheduled'}</span>
            </div>
            <div class="muted">${utc(a.starts_at)} to ${utc(a.ends_at)} · ${covered(a)}</div>
            ${a.description ? html`<p>${a.description}</p>` : ''}
          </li>`,
      )}
    </ul>
  </section>`;
}

/**
 * A public, read-only status page: its groups of components with their states and 90 days of
 * uptime, one banner for them all, maintenance ahead and ongoing incidents of what it shows. No
 * URLs, settings or error texts: only names, states, daily uptime and when incidents were, with
 * the kind of their cause (never its text). Nothing of a monitor the page does not show.
 * Rendered once per change (or maximum age) and served from a snapshot: status-page-serve.ts.
 */
export async function renderStatusPage(deps: WebDeps, slug: string): Promise<Rendered | undefined> {
  const { ctx } = deps;
  const found = await publicStatusPage(ctx, slug);
  if (!found) return undefined;
  const { page, groups } = found;
  const principal = projectPrincipal(page.project_id);
  const now = ctx.now();
  const shown = groups.flatMap((g) => g.components);
  const names = new Map(shown.map((c) => [`${c.type}:${c.id}`, shownName(c)]));
  const monitorIds = shown.filter((c) => c.type === 'monitor').map((c) => c.id);
  const [open, uptime, past, written] = await Promise.all([
    projectOpenIncidents(ctx, principal, page.project_id),
    projectDailyUptime(ctx, principal, page.project_id, monitorIds, DAYS),
    projectRecentIncidents(ctx, principal, page.project_id, monitorIds, DAYS),
    publicIncidents(ctx, page.id, namesOf(shown), now),
  ]);
  const history: History = { uptime, past, now };
  const body = html`${banner(page.overall.level, page.overall.text)} ${maintenance(found.maintenance, names)}
    ${ongoing(
      written.ongoing,
      open.filter((i) => names.has(`monitor:${i.monitor_id}`)),
      names,
      slug,
      now,
    )}
    ${groups.length > 0 ? groups.map((g, i) => groupSection(g, i, history)) : html`<p class="muted">Nothing is shown on this page yet.</p>`}
    ${recentlyResolved(written.recent, slug)}
    <p class="powered">
      <a href="${urls.statusHistory(slug)}">Incident history</a> · Updated ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC ·
      refreshes on its own ·
      <span data-testid="subscribe"
        >Subscribe: <a href="${urls.statusFeed(slug, 'atom')}" type="application/atom+xml">Atom</a> ·
        <a href="${urls.statusFeed(slug, 'rss')}" type="application/rss+xml">RSS</a> ·
        <a href="${urls.statusSummary(slug)}" type="application/json">JSON</a></span
      >
    </p>`;
  const full = publicPage(
    deps.assets,
    `${page.title} status`,
    html`${publicHead(page, slug, true)}
      <main id="main" data-live="${urls.statusPage(slug)}?fragment=1" data-live-every="30000">${body}</main>
      ${emailSubscriptionsOpen(ctx) ? subscribeForm(slug) : ''}`,
    html`<meta name="robots" content="noindex" />
      <link rel="alternate" type="application/atom+xml" title="${page.title} status (Atom)" href="${urls.statusFeed(slug, 'atom')}" />
      <link rel="alternate" type="application/rss+xml" title="${page.title} status (RSS)" href="${urls.statusFeed(slug, 'rss')}" />`,
  );
  return { pageId: page.id, projectId: page.project_id, access: found.access, renditions: { full: full.value, fragment: body.value } };
}

/** The page, its fragment, feeds and summary; returns what serves them, and the documents given besides (a month's history, an incident). */
export function statusPageRoutes(
  app: App,
  deps: WebDeps,
  access: StatusPageAccess,
  besides: Record<Exclude<Document, 'page' | 'feeds'>, (key: string) => Promise<Rendered | undefined>>,
): ServeStatusPage {
  const serve = publicStatusPages(
    app,
    deps,
    {
      page: (slug) => renderStatusPage(deps, slug),
      feeds: (slug) => renderStatusPageFeeds(deps, slug),
      ...besides,
    },
    access,
  );
  const slugOf = (req: FastifyRequest) => (req.params as { slug: string }).slug;
  app.get('/status/:slug', async (req, reply) => serve(req, reply, slugOf(req), pageRendition(req)));
  app.get('/status/:slug/feed.atom', async (req, reply) => serve(req, reply, slugOf(req), 'atom'));
  app.get('/status/:slug/feed.rss', async (req, reply) => serve(req, reply, slugOf(req), 'rss'));
  app.get('/status/:slug/summary.json', async (req, reply) => serve(req, reply, slugOf(req), 'summary'));
  return serve;
}
