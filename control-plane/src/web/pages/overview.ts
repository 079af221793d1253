import type { App } from '../../platform/http/context.ts';
import * as integrations from '../../notifications/integrations/service.ts';
import type { Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { monitorStatuses, type Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { projectOpenIncidents, projectSparklines, type OpenIncident, type SparkPoint } from '../../monitors/history.ts';
import { sparkline } from '../charts.ts';
import { formatDuration, formatUptime, fromNow, heartbeatPill, monitorPill } from '../components.ts';
import { queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { urls } from '../urls.ts';

const SHOWN = 8;

function problems(ms: readonly Monitor[], hs: readonly Heartbeat[], open: readonly OpenIncident[], now: Date): Html {
  const downMonitors = ms.filter((m) => m.status === monitorStatuses.down);
  const badBeats = hs.filter((h) => h.status === 'down' || h.status === 'late');
  if (downMonitors.length === 0 && badBeats.length === 0) {
    return html`<div class="overall up" data-testid="overall">All systems operational</div>`;
  }
  const since = (id: string) => open.find((i) => i.monitor_id === id);
  return html`<div class="card">
    <div class="card-head"><h2>Needs attention</h2></div>
    <div class="table-wrap">
      <table>
        <tbody>
          ${downMonitors.map((m) => {
            const incident = since(m.id);
            return html`<tr>
              <td>${monitorPill(m.status)}</td>
              <td class="name">
                <a href="${urls.monitor(m.id)}">${m.name}</a>${incident?.cause ? html`<span class="url">${incident.cause}</span>` : ''}
              </td>
              <td class="muted when">
                ${incident ? `for ${formatDuration(Math.max(0, Math.floor((now.getTime() - Date.parse(incident.started_at)) / 1000)))}` : ''}
              </td>
            </tr>`;
          })}
          ${badBeats.map(
            (h) =>
              html`<tr>
                <td>${heartbeatPill(h.status)}</td>
                <td class="name"><a href="${urls.heartbeat(h.id)}">${h.name}</a></td>
                <td class="muted when">last ping ${fromNow(h.last_ping_at, now, 'never')}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </div>`;
}

function monitorsCard(ms: readonly Monitor[], total: number, sparks: Map<string, SparkPoint[]>): Html {
  return html`<div class="card">
    <div class="card-head">
      <h2>Monitors</h2>
      <a href="${urls.monitors}">${total > SHOWN ? `All ${total}` : 'View all'}</a>
    </div>
    ${
      ms.length === 0
        ? html`<div class="empty">
            <p>Watch a website or an API endpoint from every region.</p>
            <a class="btn btn-primary" href="${urls.newMonitor}">New monitor</a>
          </div>`
        : html`<div class="table-wrap">
            <table>
              <tbody>
                ${ms.slice(0, SHOWN).map(
                  (m) =>
                    html`<tr>
                      <td>${monitorPill(m.status)}</td>
                      <td class="name"><a href="${urls.monitor(m.id)}">${m.name}</a></td>
                      <td class="hide-sm">${sparkline(sparks.get(m.id) ?? [])}</td>
                      <td class="num">${formatUptime(m.uptime)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </div>`;
}

function heartbeatsCard(hs: readonly Heartbeat[], total: number, now: Date): Html {
  return html`<div class="card">
    <div class="card-head">
      <h2>Heartbeats</h2>
      <a href="${urls.heartbeats}">${total > SHOWN ? `All ${total}` : 'View all'}</a>
    </div>
    ${
      hs.length === 0
        ? html`<div class="empty">
            <p>Know when a cron job or a worker stops reporting.</p>
            <a class="btn btn-primary" href="${urls.newHeartbeat}">New heartbeat</a>
          </div>`
        : html`<div class="table-wrap">
            <table>
              <tbody>
                ${hs.slice(0, SHOWN).map(
                  (h) =>
                    html`<tr>
                      <td>${heartbeatPill(h.status)}</td>
                      <td class="name"><a href="${urls.heartbeat(h.id)}">${h.name}</a></td>
                      <td class="muted nowrap">${fromNow(h.last_ping_at, now, 'never pinged')}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </div>`;
}

export function overviewRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get(urls.home, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Overview', 'overview');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const principal = sessionOf(req).principal;
    const now = ctx.now();
    const [ms, hs, open, channels] = await Promise.all([
      monitors.listMonitors(ctx, principal, pc.project.id, { page: 1, per_page: 100 }),
      heartbeats.listHeartbeats(ctx, principal, pc.project.id, { page: 1, per_page: 100 }),
      projectOpenIncidents(ctx, principal, pc.project.id),
      integrations.listIntegrations(ctx, principal, pc.project.id, { page: 1, per_page: 100 }),
    ]);
    // Integrations whose messages are not getting through (ADR 0032): said first, since every alert depends on them.
    const failing = channels.items.filter((i) => i.active && i.delivery.failing);
    const sparks = await projectSparklines(
      ctx,
      principal,
      pc.project.id,
      ms.items.slice(0, SHOWN).map((m) => m.id),
    );
    const up = ms.items.filter((m) => m.status === monitorStatuses.up).length;
    const beating = hs.items.filter((h) => h.status === 'up' || h.status === 'running').length;
    const active = ms.items.filter((m) => m.active);
    const avgUptime = active.length ? active.reduce((s, m) => s + m.uptime, 0) / active.length : null;
    const body = html`${failing.map(
        (i) =>
          html`<p class="notice down" data-testid="failing-integration">
            Integration <a href="${urls.integration(i.id)}">${i.name}</a> keeps failing (${i.delivery.failures} attempts in a row): its
            messages are not getting through.
          </p>`,
      )}
      <div class="stats">
        <div class="stat">
          <div class="label">Monitors up</div>
          <div class="value">${up}<span class="faint"> / ${ms.total}</span></div>
        </div>
        <div class="stat">
          <div class="label">Heartbeats up</div>
          <div class="value">${beating}<span class="faint"> / ${hs.total}</span></div>
        </div>
        <div class="stat">
          <div class="label">Open incidents</div>
          <div class="value${open.length ? ' down' : ''}">${open.length}</div>
        </div>
        <div class="stat">
          <div class="label">Uptime 30d</div>
          <div class="value">${formatUptime(avgUptime)}</div>
        </div>
      </div>
      ${problems(ms.items, hs.items, open, now)}
      <div class="two-col">${monitorsCard(ms.items, ms.total, sparks)}${heartbeatsCard(hs.items, hs.total, now)}</div>`;
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Overview', { sub: html`<strong>${pc.project.name}</strong> · ${pc.project.organizationName}` })}
          <div data-live="${urls.home}?fragment=1" data-live-every="5000">${body}</div>`,
      ),
    );
  });
}
