import type { App } from '../../platform/http/context.ts';
import { queryInt } from '../../platform/http/params.ts';
import type { Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { emptyState, formatDuration, fromNow, heartbeatPill, heartbeatSchedule, timeTag } from '../components.ts';
import { queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

const PER_PAGE = 100;
const pageNumber = queryInt({ min: 1, default: 1 });

function row(h: Heartbeat, now: Date): Html {
  return html`<tr data-heartbeat="${h.id}">
    <td>${heartbeatPill(h.status)}</td>
    <td class="name"><a href="${urls.heartbeat(h.id)}">${h.name}</a><span class="url">${heartbeatSchedule(h)}</span></td>
    <td class="when">${timeTag(h.last_ping_at, fromNow(h.last_ping_at, now, 'never'))}</td>
    <td class="when">
      ${h.active ? timeTag(h.next_ping_at, fromNow(h.next_ping_at, now, 'not scheduled')) : html`<span class="faint">paused</span>`}
    </td>
    <td class="num hide-sm">${formatDuration(h.grace_period)}</td>
  </tr>`;
}

function live(items: readonly Heartbeat[], now: Date): Html {
  const by = (s: Heartbeat['status']) => items.filter((h) => h.status === s).length;
  return html`<div class="stats">
      <div class="stat">
        <div class="label">Up</div>
        <div class="value up">${by('up') + by('running')}</div>
      </div>
      <div class="stat">
        <div class="label">Late</div>
        <div class="value${by('late') ? ' late' : ''}">${by('late')}</div>
      </div>
      <div class="stat">
        <div class="label">Down</div>
        <div class="value${by('down') ? ' down' : ''}">${by('down')}</div>
      </div>
      <div class="stat">
        <div class="label">New or paused</div>
        <div class="value">${by('new') + by('paused')}</div>
      </div>
    </div>
    <div class="card">
      ${dataTable(
        ['Status', 'Heartbeat', 'Last ping', 'Next expected', ['Grace', 'num hide-sm']],
        items.map((h) => row(h, now)),
      )}
    </div>`;
}

export function heartbeatListRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get(urls.heartbeats, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Heartbeats', 'heartbeats');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const page = pageNumber.safeParse(queryText(req, 'page')).data ?? 1;
    const { items, total } = await heartbeats.listHeartbeats(ctx, sessionOf(req).principal, pc.project.id, { page, per_page: PER_PAGE });
    const body = live(items, ctx.now());
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    const newButton = html`<a class="btn btn-primary" href="${urls.newHeartbeat}">New heartbeat</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Heartbeats', { sub: html`Cron jobs and workers of <strong>${pc.project.name}</strong> that report in.`, actions: total > 0 ? newButton : '' })}
        ${listOrEmpty(
          total,
          emptyState(
            'No heartbeats yet',
            'A heartbeat gives a recurring job a URL to call when it runs. If the call does not come in on time, you hear about it.',
            newButton,
          ),
          () => html`<div data-live="${urls.heartbeats}?fragment=1&amp;page=${page}" data-live-every="5000">${body}</div>`,
        )}`,
      ),
    );
  });
}
