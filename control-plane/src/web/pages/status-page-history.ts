import type { FastifyReply } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { namesOf, publicIncident, publicMonth } from '../../status-pages/incidents/service.ts';
import { publicStatusPage } from '../../status-pages/service.ts';
import { queryText, sendHtml, type WebDeps } from '../context.ts';
import { renderError } from '../errors.ts';
import { html, raw, type Html } from '../html.ts';
import { impactPill, statusPill, timeline, utcTime } from '../incident-timeline.ts';
import { publicPage } from '../layout.ts';
import { markdown } from '../markdown.ts';
import { urls } from '../urls.ts';
import { publicHead, writtenIncident } from './status-page.ts';
import type { Rendered } from '../../status-pages/snapshots.ts';
import type { ServeStatusPage } from './status-page-serve.ts';

const monthNames = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** `YYYY-MM` as a year and a month; undefined for anything else. */
function parseMonth(text: string): { year: number; month: number } | undefined {
  const m = /^(\d{4})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  return year >= 2000 && month >= 1 && month <= 12 ? { year, month } : undefined;
}

const monthKey = (year: number, month: number) => `${year}-${String(month).padStart(2, '0')}`;
const shift = (year: number, month: number, by: number) => {
  const d = new Date(Date.UTC(year, month - 1 + by, 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function page(deps: WebDeps, title: string, body: Html): Html {
  return publicPage(deps.assets, title, body, raw('<meta name="robots" content="noindex">'));
}

/** A cache key's slug and what follows it (detailKey). */
const splitKey = (key: string) => {
  const at = key.indexOf('/');
  return { slug: key.slice(0, at), detail: key.slice(at + 1) };
};

/**
 * A status page's incident history for a month (key: slug and `YYYY-MM`), as its public page
 * shows it. Rendered once per change or maximum age and served from a snapshot: status-page-serve.ts.
 */
export async function renderStatusPageHistory(deps: WebDeps, key: string): Promise<Rendered | undefined> {
  const { ctx } = deps;
  const { slug, detail } = splitKey(key);
  const at = parseMonth(detail);
  const found = at ? await publicStatusPage(ctx, slug) : undefined;
  if (!at || !found) return undefined;
  const now = ctx.now();
  const current = { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
  const names = namesOf(found.groups.flatMap((g) => g.components));
  const list = await publicMonth(ctx, found.page.id, names, at.year, at.month);
  const before = shift(at.year, at.month, -1);
  const after = shift(at.year, at.month, 1);
  const future = monthKey(after.year, after.month) > monthKey(current.year, current.month);
  const label = `${monthNames[at.month - 1]} ${at.year}`;
  const body = page(
    deps,
    `${found.page.title} incident history`,
    html`${publicHead(found.page, slug, false)}
      <main id="main">
        <h1>Incident history</h1>
        <section class="card" aria-labelledby="history" data-testid="history">
          <div class="card-head"><h2 id="history">${label}</h2></div>
          ${
            list.length
              ? html`<ul class="components">
                  ${list.map((i) => writtenIncident(i, slug))}
                </ul>`
              : html`<p class="card-body muted">No incidents in ${label}.</p>`
          }
        </section>
        <nav class="history-nav" aria-label="Months">
          <a href="${urls.statusHistory(slug, monthKey(before.year, before.month))}" rel="prev"
            >← ${monthNames[before.month - 1]} ${before.year}</a
          >
          ${future ? '' : html`<a href="${urls.statusHistory(slug, monthKey(after.year, after.month))}" rel="next">${monthNames[after.month - 1]} ${after.year} →</a>`}
        </nav>
        <p class="powered"><a href="${urls.statusPage(slug)}">Current status</a></p>
      </main>`,
  );
  return { pageId: found.page.id, projectId: found.page.project_id, access: found.access, renditions: { history: body.value } };
}

/**
 * A published incident's own page (key: slug and incident id), with its timeline and published
 * postmortem; undefined for an incident the page does not publish, which is then not kept.
 */
export async function renderStatusPageIncident(deps: WebDeps, key: string): Promise<Rendered | undefined> {
  const { ctx } = deps;
  const { slug, detail: id } = splitKey(key);
  const found = UUID.test(id) ? await publicStatusPage(ctx, slug) : undefined;
  if (!found) return undefined;
  const names = namesOf(found.groups.flatMap((g) => g.components));
  const i = await publicIncident(ctx, found.page.id, names, id);
  if (!i) return undefined;
  const month = i.created_at.slice(0, 7);
  const body = page(
    deps,
    `${i.title} · ${found.page.title} status`,
    html`${publicHead(found.page, slug, false)}
      <main id="main" data-incident="${i.id}">
        <div class="incident-title">
          <h1>${i.title}</h1>
          ${statusPill(i.status)}
        </div>
        <div class="muted incident-meta">
          ${impactPill(i.impact)} ${i.components.length ? html`Affects ${i.components.join(', ')} · ` : ''}Began
          ${utcTime(i.created_at)}${i.resolved_at ? html` · resolved ${utcTime(i.resolved_at)}` : ''}
        </div>
        <section class="card" aria-labelledby="updates">
          <div class="card-head"><h2 id="updates">Updates</h2></div>
          <div class="card-body">${timeline(i.updates, { headingsFrom: 3 })}</div>
        </section>
        ${
          i.postmortem
            ? html`<section class="card" aria-labelledby="postmortem" data-testid="postmortem">
                <div class="card-head"><h2 id="postmortem">Postmortem</h2></div>
                <div class="card-body">${markdown(i.postmortem, 3)}</div>
              </section>`
            : ''
        }
        <p class="powered">
          <a href="${urls.statusHistory(slug, month)}">Incident history</a> · <a href="${urls.statusPage(slug)}">Current status</a>
        </p>
      </main>`,
  );
  return { pageId: found.page.id, projectId: found.page.project_id, access: found.access, renditions: { incident: body.value } };
}

/** What renders the documents of the routes below, for the cache that serves them. */
export const statusPageHistoryRenderers = (deps: WebDeps) => ({
  history: (key: string) => renderStatusPageHistory(deps, key),
  incident: (key: string) => renderStatusPageIncident(deps, key),
});

/**
 * A status page's incident history, a month at a time (`/status/<slug>/history?month=YYYY-MM`,
 * this month by default), and each published incident's own page with its timeline and
 * postmortem. Public as the page is, showing only what it publishes; served from snapshots as the
 * page is. Months ahead of this one have no history and are not rendered, and an id that is not
 * a UUID names no incident: neither takes a place among the snapshots.
 */
export function statusPageHistoryRoutes(app: App, deps: WebDeps, serve: ServeStatusPage): void {
  const { ctx } = deps;
  const missing = (reply: FastifyReply, message: string) => sendHtml(reply, renderError(deps, 404, message), 404);

  app.get('/status/:slug/history', async (req, reply) => {
    const slug = (req.params as { slug: string }).slug;
    const now = ctx.now();
    const asked = queryText(req, 'month');
    const current = monthKey(now.getUTCFullYear(), now.getUTCMonth() + 1);
    const at = asked === undefined ? current : parseMonth(asked) && asked;
    if (!at) return sendHtml(reply, renderError(deps, 400, 'The month is written YYYY-MM, such as 2026-11.'), 400);
    if (at > current) return missing(reply, 'There is no history for a month that has not begun.');
    return serve(req, reply, slug, 'history', at);
  });

  app.get('/status/:slug/incidents/:id', async (req, reply) => {
    const { slug, id } = req.params as { slug: string; id: string };
    if (!UUID.test(id.toLowerCase())) return missing(reply, 'There is no such incident on this status page.');
    return serve(req, reply, slug, 'incident', id.toLowerCase());
  });
}
