import type { App } from '../../platform/http/context.ts';
import { queryInt } from '../../platform/http/params.ts';
import * as alerts from '../../alerts/service.ts';
import type { Alert } from '../../alerts/view.ts';
import { emptyState, postButton, timeTag, fromNow } from '../components.ts';
import { queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

const PER_PAGE = 100;
const pageNumber = queryInt({ min: 1, default: 1 });

const statusPill = (a: Alert) =>
  a.status === 'open'
    ? html`<span class="pill down">Open</span>`
    : a.status === 'acknowledged'
      ? html`<span class="pill late">Acknowledged</span>`
      : html`<span class="pill up">Resolved</span>`;

function row(a: Alert, csrf: string, now: Date): Html {
  const href = a.subject.type === 'monitor' ? urls.monitor(a.subject.id) : urls.heartbeat(a.subject.id);
  const steps = [
    a.acknowledged_by ? `acknowledged by ${a.acknowledged_by}` : '',
    a.renotified > 0 ? `${a.renotified} reminder${a.renotified === 1 ? '' : 's'}` : '',
    a.escalated_at ? 'escalated' : '',
  ].filter(Boolean);
  return html`<tr data-alert="${a.id}">
    <td>${statusPill(a)}</td>
    <td class="name"><a href="${href}">${a.subject.name}</a><span class="url">${a.message}</span></td>
    <td class="when">${timeTag(a.opened_at, fromNow(a.opened_at, now, ''))}</td>
    <td class="hide-sm">${steps.join(' · ')}</td>
    <td>
      ${a.status === 'open' ? postButton({ action: `${href}/acknowledge`, label: 'Acknowledge', csrf, small: true, kind: 'primary' }) : ''}
    </td>
  </tr>`;
}

/** `/app/alerts`: the project's alerts, open ones first (ADR 0032); `?all=1` shows resolved ones too. */
export function alertListRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get(urls.alerts, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Alerts', 'alerts');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const all = queryText(req, 'all') === '1';
    const page = pageNumber.safeParse(queryText(req, 'page')).data ?? 1;
    const { items, total } = await alerts.listAlerts(ctx, sessionOf(req).principal, {
      project_id: pc.project.id,
      status: all ? undefined : 'open',
      page,
      per_page: PER_PAGE,
    });
    const now = ctx.now();
    const body = html`<div class="card">
      ${dataTable(
        ['Status', 'Monitor or heartbeat', 'Opened', ['Response', 'hide-sm'], ''],
        items.map((a) => row(a, pc.session.csrfToken, now)),
      )}
    </div>`;
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    const toggle = all
      ? html`<a class="btn" href="${urls.alerts}">Open only</a>`
      : html`<a class="btn" href="${urls.alerts}?all=1">Show resolved too</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Alerts', {
          sub: html`Outages of <strong>${pc.project.name}</strong> as your team responds to them.`,
          actions: toggle,
        })}
        ${listOrEmpty(
          total,
          emptyState(
            all ? 'No alerts yet' : 'No open alerts',
            'An alert opens when a monitor or heartbeat is reported down, and closes when it is up again. Acknowledge one to stop its reminders and escalation; set those up in the project settings.',
          ),
          () =>
            html`<div data-live="${urls.alerts}?fragment=1&amp;page=${page}${all ? '&amp;all=1' : ''}" data-live-every="5000">
              ${body}
            </div>`,
        )}`,
      ),
    );
  });
}
