import { setFlash } from '../../accounts/sessions.ts';
import type { App } from '../../platform/http/context.ts';
import type { OverallLevel } from '../../status-pages/overall.ts';
import type { StatusPage } from '../../status-pages/schemas.ts';
import * as statusPages from '../../status-pages/service.ts';
import { emptyState, postButton } from '../components.ts';
import { idParam, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

/** More pages than a project may have (50): the list shows them all. */
const PER_PAGE = 100;

const levelPill: Record<OverallLevel, string> = {
  operational: 'up',
  maintenance: 'maintenance',
  degraded: 'late',
  partial_outage: 'down',
  major_outage: 'down',
};

/** The banner a page shows now, as a pill with its words. */
export function overallPill(page: Pick<StatusPage, 'overall'>): Html {
  return html`<span class="pill ${levelPill[page.overall.level]}" data-level="${page.overall.level}">${page.overall.text}</span>`;
}

function shows(page: StatusPage): Html {
  if (page.groups.length === 0)
    return html`Every monitor and heartbeat
      <div class="faint">no groups set</div>`;
  const components = page.groups.reduce((n, g) => n + g.components.length, 0);
  return html`${page.groups.map((g) => g.name).join(', ')}
    <div class="faint">
      ${page.groups.length} group${page.groups.length === 1 ? '' : 's'}, ${components} component${components === 1 ? '' : 's'}
    </div>`;
}

/** The status pages of the current project: what each shows, its banner now, its address; new, edit, new address, delete. */
export function statusPagesRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.statusPages, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Status pages', 'status-pages');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const { items } = await statusPages.listStatusPages(ctx, pc.session.principal, pc.project.id, { page: 1, per_page: PER_PAGE });
    const csrf = pc.session.csrfToken;
    const newButton = html`<a class="btn btn-primary" href="${urls.newStatusPage}">New status page</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Status pages', {
          sub: 'Public, read-only pages showing groups of this project’s monitors and heartbeats, their 90 days of uptime and one banner for them all. Anyone with a page’s address can read it; URLs, settings and errors are never shown.',
          actions: items.length ? newButton : '',
        })}
        ${listOrEmpty(
          items.length,
          emptyState(
            'No status pages yet',
            'Make a page for your customers or your team: choose what it shows and how it is grouped, or let it show everything.',
            newButton,
          ),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Page', 'Shows', 'Now', 'Address', ''],
                items.map(
                  (p) =>
                    html`<tr id="p-${p.id}" data-status-page="${p.id}">
                      <td class="name">
                        <a href="${urls.statusPageSettings(p.id)}/edit">${p.title}</a
                        >${p.description ? html`<span class="url">${p.description}</span>` : ''}
                      </td>
                      <td>${shows(p)}</td>
                      <td>${overallPill(p)}</td>
                      <td>
                        <a href="${urls.statusPage(p.slug)}" target="_blank" rel="noopener" data-testid="open-status-page">Open</a>
                        <div class="faint"><code class="wrap" data-testid="status-page-url">${p.url}</code></div>
                      </td>
                      <td class="nowrap">
                        <a class="btn btn-sm" href="${urls.statusPageIncidents(p.id)}">Incidents</a>
                        <a class="btn btn-sm" href="${urls.statusPageSubscribers(p.id)}">Subscribers</a>
                        <a class="btn btn-sm" href="${urls.statusPageSettings(p.id)}/edit">Edit</a>
                        ${postButton({ action: `${urls.statusPageSettings(p.id)}/address`, label: 'New address', csrf, small: true, confirm: `Give “${p.title}” a new address? The current one stops working.` })}
                        ${postButton({ action: `${urls.statusPageSettings(p.id)}/delete`, label: 'Delete', csrf, kind: 'danger', small: true, confirm: `Delete the status page “${p.title}”? Its address stops working.` })}
                      </td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}`,
      ),
    );
  });

  app.post(`${urls.statusPages}/:id/address`, async (req, reply) => {
    const session = sessionOf(req);
    const page = await statusPages.changeStatusPageAddress(ctx, session.principal, idParam(req));
    await setFlash(ctx.sql, session.id, `“${page.title}” has a new address; the old one no longer works.`);
    return reply.redirect(`${urls.statusPages}#p-${page.id}`, 303);
  });

  app.post(`${urls.statusPages}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const page = await statusPages.getStatusPage(ctx, session.principal, id);
    await statusPages.deleteStatusPage(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Status page “${page.title}” deleted; its address no longer works.`);
    return reply.redirect(urls.statusPages, 303);
  });
}
