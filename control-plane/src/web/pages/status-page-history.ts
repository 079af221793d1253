import type { FastifyReply, FastifyRequest } from 'fastify';
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
import type { PageAccess } from '../../status-pages/snapshots.ts';
import { PRIVATE_CACHE_CONTROL, type StatusPageAccess } from './status-page-access.ts';

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

const validSlug = (slug: string) => /^[A-Za-z0-9_-]{22}$/.test(slug);

function page(deps: WebDeps, title: string, body: Html): Html {
  return publicPage(deps.assets, title, body, raw('<meta name="robots" content="noindex">'));
}

/**
 * A status page's incident history, a month at a time (`/status/<slug>/history?month=YYYY-MM`,
 * this month by default), and each published incident's own page with its timeline and
 * postmortem. Public as the page is, showing only what it publishes.
 */
export function statusPageHistoryRoutes(app: App, deps: WebDeps, access: StatusPageAccess): void {
  const { ctx } = deps;
  const missing = () => renderError(deps, 404, 'There is no status page at this address.');
  /** Refused (the reply is sent), else the Cache-Control of the answer: a private page's is never stored. */
  const gate = async (req: FastifyRequest, reply: FastifyReply, slug: string, page: PageAccess | null) => {
    const a = await access.check(req, reply, slug, page, 'html');
    return a === 'refused' ? undefined : a === 'granted' ? PRIVATE_CACHE_CONTROL : 'no-store';
  };

  app.get('/status/:slug/history', async (req, reply) => {
    const slug = (req.params as { slug: string }).slug;
    const found = validSlug(slug) ? await publicStatusPage(ctx, slug) : undefined;
    if (!found) return sendHtml(reply, missing(), 404);
    const cacheControl = await gate(req, reply, slug, found.access);
    if (!cacheControl) return reply;
    const now = ctx.now();
    const asked = queryText(req, 'month');
    const current = { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
    const at = asked === undefined ? current : parseMonth(asked);
    if (!at) return sendHtml(reply, renderError(deps, 400, 'The month is written YYYY-MM, such as 2026-11.'), 400);
    const names = namesOf(found.groups.flatMap((g) => g.components));
    const list = await publicMonth(ctx, found.page.id, names, at.year, at.month);
    const before = shift(at.year, at.month, -1);
    const after = shift(at.year, at.month, 1);
    const future = monthKey(after.year, after.month) > monthKey(current.year, current.month);
    const label = `${monthNames[at.month - 1]} ${at.year}`;
    return sendHtml(
      reply.header('cache-control', cacheControl),
      page(
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
      ),
    );
  });

  app.get('/status/:slug/incidents/:id', async (req, reply) => {
    const { slug, id } = req.params as { slug: string; id: string };
    const found = validSlug(slug) ? await publicStatusPage(ctx, slug) : undefined;
    if (!found) return sendHtml(reply, missing(), 404);
    const cacheControl = await gate(req, reply, slug, found.access);
    if (!cacheControl) return reply;
    const names = namesOf(found.groups.flatMap((g) => g.components));
    const i = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
      ? await publicIncident(ctx, found.page.id, names, id)
      : undefined;
    if (!i) return sendHtml(reply, renderError(deps, 404, 'There is no such incident on this status page.'), 404);
    const month = i.created_at.slice(0, 7);
    return sendHtml(
      reply.header('cache-control', cacheControl),
      page(
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
      ),
    );
  });
}
