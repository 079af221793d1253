import type { App } from '../../platform/http/context.ts';
import { queryInt } from '../../platform/http/params.ts';
import { monitorStatuses, type Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { projectSparklines, type SparkPoint } from '../../monitors/history.ts';
import { sparkline } from '../charts.ts';
import { emptyState, formatMs, formatUptime, monitorPill } from '../components.ts';
import { queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { urls } from '../urls.ts';

const PER_PAGE = 100;
const pageNumber = queryInt({ min: 1, default: 1 });

function counts(items: readonly Monitor[]) {
  const by = (s: number) => items.filter((m) => m.status === s).length;
  return {
    up: by(monitorStatuses.up),
    down: by(monitorStatuses.down),
    paused: by(monitorStatuses.paused),
    pending: by(monitorStatuses.pending),
  };
}

function row(m: Monitor, spark: SparkPoint[] | undefined): Html {
  const last = spark?.at(-1);
  return html`<tr data-monitor="${m.id}">
    <td>${monitorPill(m.status)}</td>
    <td class="name"><a href="${urls.monitor(m.id)}">${m.name}</a><span class="url">${m.method} ${m.url}</span></td>
    <td class="num">${formatUptime(m.uptime)}</td>
    <td class="hide-sm">${sparkline(spark ?? [])}</td>
    <td class="num hide-sm">${last ? formatMs(last.ms) : '–'}</td>
    <td class="nowrap muted">${m.last_checked}</td>
  </tr>`;
}

function live(items: readonly Monitor[], sparks: Map<string, SparkPoint[]>, total: number, page: number): Html {
  const c = counts(items);
  const lastPage = Math.max(1, Math.ceil(total / PER_PAGE));
  return html`<div class="stats">
      <div class="stat">
        <div class="label">Up</div>
        <div class="value up">${c.up}</div>
      </div>
      <div class="stat">
        <div class="label">Down</div>
        <div class="value${c.down ? ' down' : ''}">${c.down}</div>
      </div>
      <div class="stat">
        <div class="label">Paused</div>
        <div class="value">${c.paused}</div>
      </div>
      <div class="stat">
        <div class="label">Pending</div>
        <div class="value">${c.pending}</div>
      </div>
    </div>
    <div class="card">
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Status</th>
              <th>Monitor</th>
              <th class="num">Uptime 30d</th>
              <th class="hide-sm">Response time</th>
              <th class="num hide-sm">Latest</th>
              <th>Last checked</th>
            </tr>
          </thead>
          <tbody>
            ${items.map((m) => row(m, sparks.get(m.id)))}
          </tbody>
        </table>
      </div>
      ${
        lastPage > 1
          ? html`<div class="pager">
              ${page > 1 ? html`<a class="btn btn-sm" href="${urls.monitors}?page=${page - 1}">Previous</a>` : ''}<span class="muted"
                >Page ${page} of ${lastPage}</span
              >${page < lastPage ? html`<a class="btn btn-sm" href="${urls.monitors}?page=${page + 1}">Next</a>` : ''}
            </div>`
          : ''
      }
    </div>`;
}

export function monitorListRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get(urls.monitors, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Monitors', 'monitors');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const page = pageNumber.safeParse(queryText(req, 'page')).data ?? 1;
    const { items, total } = await monitors.listMonitors(ctx, sessionOf(req).principal, pc.project.id, { page, per_page: PER_PAGE });
    const sparks = await projectSparklines(
      ctx,
      sessionOf(req).principal,
      pc.project.id,
      items.map((m) => m.id),
    );
    const body = live(items, sparks, total, page);
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    const newButton = html`<a class="btn btn-primary" href="${urls.newMonitor}">New monitor</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Monitors', { sub: html`HTTP checks of <strong>${pc.project.name}</strong>, from every region with a probe agent.`, actions: total > 0 ? newButton : '' })}
        ${
          total === 0
            ? html`<div class="card">
                ${emptyState('No monitors yet', 'A monitor checks a URL every minute from your probe agents and tells you when it stops answering as expected.', newButton)}
              </div>`
            : html`<div data-live="${urls.monitors}?fragment=1&amp;page=${page}" data-live-every="5000">${body}</div>`
        }`,
      ),
    );
  });
}
