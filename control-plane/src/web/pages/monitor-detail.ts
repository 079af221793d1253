import type { FastifyReply } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import { chartRanges, monitorChart, monitorIncidents, monitorRecentSpan, monitorResults, type ChartRange } from '../../monitors/history.ts';
import type { Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { subjectMaintenance } from '../../maintenance/service.ts';
import { openAlertsOfSubject } from '../../alerts/service.ts';
import { alertPanel } from '../alert-panel.ts';
import { badgeSlug } from '../../status-pages/badges.ts';
import { phaseBar, phaseLegend, responseChart } from '../charts.ts';
import { formatDuration, formatMs, formatUptime, monitorPill, postButton, timeTag } from '../components.ts';
import { idParam, queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { dataTable } from '../table.ts';
import { dependencyNames, dependsOnLinks } from '../dependency-choices.ts';
import { urls } from '../urls.ts';
import { defaultChartRange } from '../chart-range.ts';
import { badgeCard } from './badges.ts';
import { expiryCards } from './expiry-cards.ts';
import { maintenanceNote } from './maintenance.ts';
import { codesText } from './monitor-form.ts';
import { lastCheckCard } from '../check-details.ts';
import { assertionLabel } from '../../../../shared/src/checks/assertions.ts';
import { typeLabel } from '../check-fields.ts';

type Results = Awaited<ReturnType<typeof monitorResults>>['items'];
type Incidents = Awaited<ReturnType<typeof monitorIncidents>>['items'];

const isRange = (value: string | undefined): value is ChartRange => value !== undefined && Object.hasOwn(chartRanges, value);

function checksTable(results: Results, now: Date): Html {
  const scale = Math.max(0, ...results.map((r) => r.timings.total));
  return dataTable(
    ['When', 'Region', 'Result', ['Phases', 'hide-sm'], ['Total', 'num']],
    results.map(
      (r) =>
        html`<tr>
          <td class="when">${timeTag(r.checked_at, relativeTime(new Date(r.checked_at), now))}</td>
          <td><span class="tag">${r.region}</span></td>
          <td>
            ${
              !r.ok
                ? html`<span class="pill down">${r.status_code ?? r.error?.class ?? 'failed'}</span>`
                : r.degraded
                  ? html`<span class="pill late" data-testid="degraded-check" title="Passed, but a degraded assertion failed"
                      >Degraded${r.status_code ? ` · ${r.status_code}` : ''}</span
                    >`
                  : html`<span class="pill up">${r.status_code ?? 'OK'}</span>`
            }
            ${r.error ? html`<div class="error-text">${r.error.message || r.error.class}</div>` : ''}
            ${
              r.ok && r.degraded
                ? (r.assertions ?? [])
                    .filter((a) => !a.passed && a.severity === 'degraded')
                    .map(
                      (a) => html`<div class="error-text">${a.message ?? assertionLabel(a as Parameters<typeof assertionLabel>[0])}</div>`,
                    )
                : ''
            }
            ${r.attempts > 1 ? html`<div class="faint">confirmed by a re-check</div>` : ''}
          </td>
          <td class="hide-sm">${phaseBar(r.timings, scale)}</td>
          <td class="num">${formatMs(r.timings.total)}</td>
        </tr>`,
    ),
    { empty: "No checks yet. The first one runs within the monitor's interval once a probe agent is connected." },
  );
}

const dependentAlert: Record<Incidents[number]['dependents'][number]['alert'], string> = {
  held: 'alert held while this is down',
  released: 'still down after this recovered: alerted then',
  recovered: 'recovered with it: nothing sent',
  dropped: 'recovered with it: nothing sent',
};

function incidentsTable(items: Incidents, now: Date): Html {
  return dataTable(
    ['Started', 'Duration', 'Cause', ['Regions', 'hide-sm']],
    items.map(
      (i) =>
        html`<tr>
          <td class="when">${timeTag(i.started_at, relativeTime(new Date(i.started_at), now))}</td>
          <td class="nowrap">
            ${
              i.ended_at
                ? formatDuration(i.duration)
                : html`<span class="pill ${i.scope === 'global' ? 'down' : 'late'}">Ongoing · ${formatDuration(i.duration)}</span>`
            }
            ${i.scope === 'regional' ? html`<div><span class="tag" data-testid="regional" title="Failing in some regions, fewer than the quorum: the monitor stayed up">Regional</span></div>` : ''}
            ${i.scope === 'degraded' ? html`<div><span class="tag" data-testid="degraded" title="Up, but degraded assertions failed (slow, for example): not counted as downtime">Degraded</span></div>` : ''}
          </td>
          <td>
            ${i.cause || html`<span class="faint">–</span>`}
            ${
              i.joined
                ? html`<div class="faint" data-testid="joined">
                    Joined the outage of
                    <a href="${i.joined.incident_id ? urls.monitor(i.joined.parent_id) : urls.heartbeat(i.joined.parent_id)}"
                      >what it depends on</a
                    >: its alert waited.
                  </div>`
                : ''
            }
            ${
              i.dependents.length > 0
                ? html`<details class="evidence" data-testid="dependents">
                    <summary>${i.dependents.length} dependent${i.dependents.length === 1 ? '' : 's'} joined this outage</summary>
                    <ul>
                      ${i.dependents.map(
                        (d) =>
                          html`<li>
                            <a href="${d.type === 'monitor' ? urls.monitor(d.id) : urls.heartbeat(d.id)}">${d.name}</a>
                            <span class="faint">${dependentAlert[d.alert]}</span>
                          </li>`,
                      )}
                    </ul>
                  </details>`
                : ''
            }
          </td>
          <td class="hide-sm">
            ${i.regions.map((r) => html`<span class="tag">${r}</span> `)}
            ${
              i.evidence.length > 0
                ? html`<details class="evidence">
                    <summary>What each region saw</summary>
                    <ul>
                      ${i.evidence.map(
                        (e) =>
                          html`<li data-testid="evidence">
                            <strong>${e.region}</strong>:
                            ${e.ok ? 'passed' : e.error || 'failed'}${e.status_code === null ? '' : ` (HTTP ${e.status_code})`}${
                              e.total_ms === null ? '' : ` in ${formatMs(e.total_ms)}`
                            }${e.abstained ? html` <span class="faint">abstained: region degraded</span>` : ''}
                          </li>`,
                      )}
                    </ul>
                  </details>`
                : ''
            }
          </td>
        </tr>`,
    ),
    { empty: 'No incidents. May it stay that way.' },
  );
}

function live(m: Monitor, range: ChartRange, chart: Html, results: Results, incidents: Incidents, now: Date): Html {
  const latest = results.find((r) => r.ok);
  return html`<div class="stats">
      <div class="stat">
        <div class="label">Status</div>
        <div class="value">
          ${monitorPill(m.status, true)}
          ${m.flapping_since ? html`<span class="pill late" data-testid="flapping" title="Since ${m.flapping_since}">Flapping</span>` : ''}
          ${m.failing_regions.length > 0 ? html`<div class="faint" data-testid="failing-regions">failing in ${m.failing_regions.join(', ')}</div>` : ''}
        </div>
      </div>
      <div class="stat">
        <div class="label">Uptime 30d</div>
        <div class="value">${formatUptime(m.uptime)}</div>
      </div>
      <div class="stat">
        <div class="label">Latest response</div>
        <div class="value">${latest ? formatMs(latest.timings.total) : '–'}</div>
      </div>
      <div class="stat">
        <div class="label">Last checked</div>
        <div class="value text" data-testid="last-checked">${m.last_checked}</div>
      </div>
      <div class="stat">
        <div class="label">Incidents</div>
        <div class="value">${m.incidents_count}</div>
      </div>
    </div>
    <div class="card">
      <div class="card-head">
        <h2>Response time</h2>
        <nav class="range-tabs" aria-label="Range">
          ${(Object.keys(chartRanges) as ChartRange[]).map(
            (r) => html`<a href="?range=${r}" ${r === range ? html` aria-current="true"` : ''}>${r}</a>`,
          )}
        </nav>
      </div>
      <div class="card-body">${chart}</div>
    </div>
    <div class="card">
      <div class="card-head">
        <h2>Recent checks</h2>
        ${phaseLegend}
      </div>
      ${checksTable(results, now)}
    </div>
    ${lastCheckCard(results)}
    <div class="card">
      <div class="card-head"><h2>Incidents</h2></div>
      ${incidentsTable(incidents, now)}
    </div>`;
}

function details(m: Monitor, names: ReadonlyMap<string, string>): Html {
  return html`<div class="card">
    <div class="card-head"><h2>Settings</h2></div>
    <div class="card-body">
      <dl class="facts">
        <dt>Type</dt>
        <dd>${typeLabel(m)}</dd>
        ${
          m.type === 'http'
            ? html`<dt>Method</dt>
                <dd>${m.method}</dd>
                <dt>Accepted codes</dt>
                <dd>${codesText(m.valid_http_codes)}</dd>`
            : ''
        }
        <dt>Interval</dt>
        <dd>every ${formatDuration(m.interval)}</dd>
        <dt>Timeout</dt>
        <dd>${m.timeout} s</dd>
        <dt>Regions</dt>
        <dd>${m.regions ? m.regions.join(', ') : 'every region with a live agent'}</dd>
        <dt>Down when</dt>
        <dd data-testid="verdict-policy">
          ${m.quorum === null ? 'a majority of the regions voting' : `${m.quorum} region${m.quorum === 1 ? '' : 's'}`}
          fail${m.confirm_down > 1 ? ` for ${m.confirm_down} rounds in a row` : ''}; up again after ${m.confirm_up} passing
          round${m.confirm_up === 1 ? '' : 's'}
        </dd>
        <dt>Depends on</dt>
        <dd data-testid="depends-on">${dependsOnLinks(m.depends_on, names)}</dd>
        <dt>Flapping</dt>
        <dd>
          ${m.flap_threshold === null ? 'not detected' : `more than ${m.flap_threshold} changes within ${formatDuration(m.flap_window_seconds)}`}
        </dd>
        <dt>Tags</dt>
        <dd>
          ${m.tags.length > 0 ? m.tags.map((t) => html`<a class="tag" href="${urls.monitors}?tag=${encodeURIComponent(t)}">${t}</a> `) : 'none'}
        </dd>
        ${
          m.type === 'http'
            ? html`<dt>Redirects</dt>
                <dd>${m.follow_redirects ? 'followed' : 'not followed'}</dd>
                <dt>Basic auth</dt>
                <dd>${m.basic_auth_username ? html`as <code>${m.basic_auth_username}</code>` : 'none'}</dd>`
            : ''
        }
        <dt>Monitor id</dt>
        <dd><code>${m.id}</code></dd>
      </dl>
    </div>
  </div>`;
}

export function monitorDetailRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(`${urls.monitors}/:id`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const monitor = await monitors.getMonitor(ctx, principal, id);
    const now = ctx.now();
    const asked = queryText(req, 'range');
    const range = isRange(asked) ? asked : defaultChartRange(monitor, await monitorRecentSpan(ctx, principal, id), now);
    const [{ series, from, to }, results, incidents] = await Promise.all([
      monitorChart(ctx, principal, id, range),
      monitorResults(ctx, principal, id, undefined, { page: 1, per_page: 20 }),
      monitorIncidents(ctx, principal, id, { page: 1, per_page: 10 }),
    ]);
    const body = live(monitor, range, responseChart(series, from, to), results.items, incidents.items, now);
    if (queryText(req, 'fragment')) return sendHtml(reply, body);

    const pc = await pageContext(req, deps, monitor.name, 'monitors');
    const csrf = pc.session.csrfToken;
    const base = urls.monitor(id);
    const actions = html`<a class="btn" href="${base}/edit">Edit</a>
      ${monitor.active ? postButton({ action: `${base}/pause`, label: 'Pause', csrf }) : postButton({ action: `${base}/resume`, label: 'Resume', csrf, kind: 'primary' })}
      ${postButton({ action: `${base}/delete`, label: 'Delete', csrf, kind: 'danger', confirm: `Delete the monitor “${monitor.name}” and its history?` })}`;
    const [slug, covered, open] = await Promise.all([
      badgeSlug(ctx, principal, { monitorId: id }),
      subjectMaintenance(ctx, principal, monitor.project_id, { type: 'monitor', id }),
      openAlertsOfSubject(ctx, principal, { type: 'monitor', id }),
    ]);
    const names = await dependencyNames(deps, principal, monitor.project_id, monitor.depends_on);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(monitor.name, {
            sub: html`<span class="tag" data-testid="monitor-type">${typeLabel(monitor)}</span>
              <a href="${monitor.url}" rel="noopener noreferrer" target="_blank">${monitor.url}</a>`,
            actions,
          })}
          ${maintenanceNote(covered)}
          <div data-live="${base}?fragment=1&amp;range=${range}" data-live-every="5000">${body}</div>
          ${alertPanel({ base, csrf, open, snoozedUntil: monitor.snoozed_until })} ${expiryCards(monitor, now)}
          <div class="two-col">
            ${details(monitor, names)}${badgeCard(deps, csrf, base, slug, { type: 'monitor', name: monitor.name })}
          </div>`,
      ),
    );
  });

  const setActive = (active: boolean) => async (req: Parameters<typeof idParam>[0], reply: FastifyReply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const m = await monitors.updateMonitor(ctx, session.principal, id, { active });
    await setFlash(
      ctx.sql,
      session.id,
      active ? `“${m.name}” resumed: checks start again.` : `“${m.name}” paused: no checks and no alerts until you resume it.`,
    );
    return reply.redirect(urls.monitor(id), 303);
  };
  app.post(`${urls.monitors}/:id/pause`, setActive(false));
  app.post(`${urls.monitors}/:id/resume`, setActive(true));

  app.post(`${urls.monitors}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const m = await monitors.getMonitor(ctx, session.principal, id);
    await monitors.deleteMonitor(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Monitor “${m.name}” deleted.`);
    return reply.redirect(urls.monitors, 303);
  });
}
