import type { App } from '../../platform/http/context.ts';
import type { Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { monitorStatuses, type Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import {
  projectDailyUptime,
  projectOpenIncidents,
  projectRecentIncidents,
  type DayUptime,
  type OpenIncident,
  type PublicIncident,
} from '../../monitors/history.ts';
import { uptimeBars } from '../bars.ts';
import { formatDuration, formatUptime, heartbeatPill, monitorPill, timeTag } from '../components.ts';
import { queryText, sendHtml, type WebDeps } from '../context.ts';
import { renderError } from '../errors.ts';
import { html, raw, type Html } from '../html.ts';
import { publicPage } from '../layout.ts';
import { projectPrincipal } from '../public-principal.ts';
import { findStatusPage } from '../../status-pages/service.ts';
import { announcements, type Announcement } from '../../maintenance/service.ts';
import { urls } from '../urls.ts';

const DAYS = 90;

function overall(ms: readonly Monitor[], hs: readonly Heartbeat[]): Html {
  const down = ms.some((m) => m.status === monitorStatuses.down) || hs.some((h) => h.status === 'down');
  const late = hs.some((h) => h.status === 'late');
  const degraded = ms.some((m) => m.status === monitorStatuses.degraded);
  if (down) return html`<div class="overall down" data-testid="overall">Some systems are down</div>`;
  if (degraded) return html`<div class="overall late" data-testid="overall">Degraded performance</div>`;
  if (late) return html`<div class="overall late" data-testid="overall">Some systems are degraded</div>`;
  return html`<div class="overall up" data-testid="overall">All systems operational</div>`;
}

function average(days: readonly DayUptime[]): number | null {
  const known = days.filter((d) => d.uptime !== null);
  return known.length === 0 ? null : known.reduce((s, d) => s + d.uptime!, 0) / known.length;
}

function monitorComponent(m: Monitor, days: readonly DayUptime[], incidents: readonly PublicIncident[], now: Date): Html {
  return html`<div class="component">
    <div class="component-head"><strong>${m.name}</strong>${monitorPill(m.status)}</div>
    ${uptimeBars(days, incidents, now)}
    <div class="bars-foot"><span>${DAYS} days ago</span><span>${formatUptime(average(days))} uptime</span><span>Today</span></div>
  </div>`;
}

function incidents(list: readonly OpenIncident[], now: Date): Html {
  if (list.length === 0) return html``;
  return html`<div class="card">
    <div class="card-head"><h2>Ongoing incidents</h2></div>
    ${list.map(
      (i) =>
        html`<div class="component">
          <div class="component-head"><strong>${i.monitor_name}</strong><span class="pill down">Down</span></div>
          <div class="muted">
            Since ${timeTag(i.started_at, i.started_at.slice(0, 16).replace('T', ' ') + ' UTC')} ·
            ${formatDuration(Math.max(0, Math.floor((now.getTime() - Date.parse(i.started_at)) / 1000)))}
          </div>
        </div>`,
    )}
  </div>`;
}

const utc = (iso: string) => timeTag(iso, iso.slice(0, 16).replace('T', ' ') + ' UTC');

/** Maintenance running now or starting within the week, with what it covers (by name). */
function maintenance(list: readonly Announcement[], names: ReadonlyMap<string, string>): Html {
  if (list.length === 0) return html``;
  const covered = (a: Announcement) =>
    a.monitor_ids === null
      ? 'All services'
      : [...a.monitor_ids, ...(a.heartbeat_ids ?? [])]
          .map((id) => names.get(id))
          .filter(Boolean)
          .join(', ');
  return html`<div class="card" data-testid="maintenance">
    <div class="card-head"><h2>Scheduled maintenance</h2></div>
    ${list.map(
      (a) =>
        html`<div class="component">
          <div class="component-head">
            <strong>${a.name}</strong
            ><span class="pill ${a.in_progress ? 'late' : 'paused'}">${a.in_progress ? 'In progress' : 'Scheduled'}</span>
          </div>
          <div class="muted">${utc(a.starts_at)} to ${utc(a.ends_at)} · ${covered(a)}</div>
          ${a.description ? html`<div>${a.description}</div>` : ''}
        </div>`,
    )}
  </div>`;
}

/**
 * The public, read-only status page of a project: no URLs, settings or error texts, only names,
 * states, daily uptime and when incidents were, with the kind of their cause (never its text).
 */
export function statusPageRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get('/status/:slug', async (req, reply) => {
    const slug = (req.params as { slug: string }).slug;
    const page = /^[A-Za-z0-9_-]{22}$/.test(slug) ? await findStatusPage(ctx.sql, slug) : undefined;
    if (!page) return sendHtml(reply, renderError(deps, 404, 'There is no status page at this address.'), 404);
    const principal = projectPrincipal(page.project_id);
    const now = ctx.now();
    const [ms, hs, open, windows] = await Promise.all([
      monitors.listMonitors(ctx, principal, page.project_id, { page: 1, per_page: 100 }),
      heartbeats.listHeartbeats(ctx, principal, page.project_id, { page: 1, per_page: 100 }),
      projectOpenIncidents(ctx, principal, page.project_id),
      announcements(ctx, page.project_id),
    ]);
    const names = new Map<string, string>([...ms.items, ...hs.items].map((x) => [x.id, x.name]));
    const ids = ms.items.map((m) => m.id);
    const [uptime, past] = await Promise.all([
      projectDailyUptime(ctx, principal, page.project_id, ids, DAYS),
      projectRecentIncidents(ctx, principal, page.project_id, ids, DAYS),
    ]);
    const body = html`${overall(ms.items, hs.items)} ${maintenance(windows, names)} ${incidents(open, now)}
      ${
        ms.items.length > 0
          ? html`<div class="card">
              <div class="card-head"><h2>Services</h2></div>
              ${ms.items.map((m) =>
                monitorComponent(
                  m,
                  uptime.get(m.id) ?? [],
                  past.filter((i) => i.monitor_id === m.id),
                  now,
                ),
              )}
            </div>`
          : ''
      }
      ${
        hs.items.length > 0
          ? html`<div class="card">
              <div class="card-head"><h2>Scheduled jobs</h2></div>
              ${hs.items.map(
                (h) =>
                  html`<div class="component">
                    <div class="component-head"><strong>${h.name}</strong>${heartbeatPill(h.status)}</div>
                  </div>`,
              )}
            </div>`
          : ''
      }
      <p class="powered">Updated ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC · refreshes on its own</p>`;
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      publicPage(
        deps.assets,
        `${page.name} status`,
        html`<div class="public-head">
            <h1>${page.name}</h1>
            <span class="muted">Status</span>
          </div>
          <div data-live="${urls.statusPage(slug)}?fragment=1" data-live-every="30000">${body}</div>`,
        raw('<meta name="robots" content="noindex">'),
      ),
    );
  });
}
