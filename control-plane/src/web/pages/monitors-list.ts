import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { queryInt } from '../../platform/http/params.ts';
import { MonitorListQuery, monitorStatuses, type Monitor } from '../../monitors/schemas.ts';
import type { RegionView } from '../../monitors/regions/schemas.ts';
import { listRegions } from '../../monitors/regions/service.ts';
import * as monitors from '../../monitors/service.ts';
import { relativeTime } from '../../platform/http/time.ts';
import { projectSparklines, projectUptimeWindows, type SparkPoint, type UptimeWindows } from '../../monitors/history.ts';
import { checkBars } from '../bars.ts';
import { emptyState, formatMs, formatUptime, monitorPill } from '../components.ts';
import { queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

const PER_PAGE = 100;
const pageNumber = queryInt({ min: 1, default: 1 });

const statusChoices = [
  ['', 'Any status'],
  ['down', 'Down'],
  ['degraded', 'Degraded'],
  ['up', 'Up'],
  ['pending', 'Pending'],
  ['paused', 'Paused'],
] as const;
const sortChoices = [
  ['status', 'Down first'],
  ['name', 'Name'],
  ['created', 'Oldest first'],
] as const;

type Search = monitors.MonitorSearch;

const isChoice = <T extends string>(choices: readonly (readonly [T | '', string])[], v: string | undefined): v is T =>
  v !== undefined && v !== '' && choices.some(([c]) => c === v);

/** The list's filters and order from the address; what is not one of the choices is left out. */
function searchOf(req: FastifyRequest): Search {
  const status = queryText(req, 'status');
  const sort = queryText(req, 'sort');
  const name = queryText(req, 'q')?.trim().slice(0, 255);
  const tag = MonitorListQuery.shape.tag.safeParse(queryText(req, 'tag') || undefined).data;
  return {
    sort: isChoice(sortChoices, sort) ? sort : 'status',
    ...(isChoice(statusChoices, status) ? { status } : {}),
    ...(name ? { name } : {}),
    ...(tag ? { tag } : {}),
  };
}

/** The query of a list address with these filters (the default order and empty filters left out). */
function searchQuery(s: Search, page: number, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  params.set('page', String(page));
  if (s.name) params.set('q', s.name);
  if (s.status) params.set('status', s.status);
  if (s.tag) params.set('tag', s.tag);
  if (s.sort !== 'status') params.set('sort', s.sort);
  return params.toString();
}

function counts(items: readonly Monitor[]) {
  const by = (s: number) => items.filter((m) => m.status === s).length;
  return {
    up: by(monitorStatuses.up),
    down: by(monitorStatuses.down),
    degraded: by(monitorStatuses.degraded),
    paused: by(monitorStatuses.paused),
    pending: by(monitorStatuses.pending),
  };
}

function row(m: Monitor, slots: readonly SparkPoint[], uptime: UptimeWindows | undefined, s: Search): Html {
  const last = slots.at(-1);
  return html`<tr data-monitor="${m.id}">
    <td>${monitorPill(m.status)}</td>
    <td class="name">
      <a href="${urls.monitor(m.id)}">${m.name}</a><span class="url">${m.method} ${m.url}</span>${
        m.tags.length > 0
          ? html`<span class="tags"
              >${m.tags.map((t) => html`<a class="tag" href="${urls.monitors}?${searchQuery({ ...s, tag: t }, 1)}">${t}</a>`)}</span
            >`
          : ''
      }
    </td>
    <td class="beats-cell">${checkBars(slots)}</td>
    <td class="num" data-window="24h">${formatUptime(uptime?.day)}</td>
    <td class="num hide-md" data-window="7d">${formatUptime(uptime?.week)}</td>
    <td class="num hide-md" data-window="30d">${formatUptime(uptime?.month ?? m.uptime)}</td>
    <td class="nowrap hide-sm">
      <span class="muted">${m.last_checked}</span>${last?.ms != null ? html`<span class="sub-line">${formatMs(last.ms)}</span>` : ''}
    </td>
  </tr>`;
}

interface Listed {
  items: readonly Monitor[];
  total: number;
  slots: Map<string, SparkPoint[]>;
  uptime: Map<string, UptimeWindows>;
  regions: readonly RegionView[];
  now: Date;
}

const reasons = {
  silent: 'no probe agent is connected',
  canaries: 'its probe agents cannot reach their canaries',
  disagreement: 'most of its checks fail while the other regions see the same sites up',
} as const;

/** Degraded probe regions: their results are kept but do not vote, so say so where the statuses are. */
function regionNotices(regions: readonly RegionView[], now: Date): Html {
  return html`${regions
    .filter((r) => r.state === 'degraded')
    .map(
      (r) =>
        html`<div class="flash error" role="status" data-testid="region-degraded">
          Probe region <strong>${r.region}</strong> is degraded since ${relativeTime(new Date(r.since), now)}:
          ${reasons[r.reason ?? 'silent']}. Its results are kept but do not put monitors down or up.
        </div>`,
    )}`;
}

function live(l: Listed, s: Search, page: number): Html {
  const c = counts(l.items);
  const lastPage = Math.max(1, Math.ceil(l.total / PER_PAGE));
  const stat = (label: string, value: number, cls = '') =>
    html`<div class="stat">
      <div class="label">${label}</div>
      <div class="value${cls ? ` ${cls}` : ''}">${value}</div>
    </div>`;
  return html`${regionNotices(l.regions, l.now)}
    <div class="stats">
      ${stat('Up', c.up, 'up')} ${stat('Down', c.down, c.down ? 'down' : '')} ${c.degraded ? stat('Degraded', c.degraded, 'late') : ''}
      ${stat('Paused', c.paused)} ${stat('Pending', c.pending)}
    </div>
    <div class="card">
      ${dataTable(
        [
          'Status',
          'Monitor',
          ['Recent checks', 'beats-cell'],
          ['24 h', 'num'],
          ['7 d', 'num hide-md'],
          ['30 d', 'num hide-md'],
          ['Last check', 'hide-sm'],
        ],
        l.items.map((m) => row(m, l.slots.get(m.id) ?? [], l.uptime.get(m.id), s)),
        { className: 'monitor-list', empty: html`No monitor matches. <a href="${urls.monitors}">Show them all</a>` },
      )}
      ${
        lastPage > 1
          ? html`<div class="pager">
              ${page > 1 ? html`<a class="btn btn-sm" href="${urls.monitors}?${searchQuery(s, page - 1)}">Previous</a>` : ''}<span
                class="muted"
                >Page ${page} of ${lastPage}</span
              >${page < lastPage ? html`<a class="btn btn-sm" href="${urls.monitors}?${searchQuery(s, page + 1)}">Next</a>` : ''}
            </div>`
          : ''
      }
    </div>`;
}

/** Search by name, narrow by status and tag, pick the order; the selects apply themselves with the script. */
function filters(s: Search, tags: readonly string[]): Html {
  const options = (choices: readonly (readonly [string, string])[], value: string | undefined) =>
    choices.map(([v, label]) => html`<option value="${v}" ${v === (value ?? '') ? html` selected` : ''}>${label}</option>`);
  return html`<form class="filters" method="get" action="${urls.monitors}" role="search">
    <input type="search" name="q" value="${s.name ?? ''}" placeholder="Search by name" aria-label="Search by name" />
    <select name="status" aria-label="Status" data-autosubmit>
      ${options(statusChoices, s.status)}
    </select>
    ${
      tags.length > 0 || s.tag
        ? html`<select name="tag" aria-label="Tag" data-autosubmit>
            ${options([['', 'Any tag'], ...[...new Set([...tags, ...(s.tag ? [s.tag] : [])])].map((t) => [t, t] as const)], s.tag)}
          </select>`
        : ''
    }
    <select name="sort" aria-label="Order" data-autosubmit>
      ${options(sortChoices, s.sort)}
    </select>
    <button type="submit" class="btn btn-sm">Search</button>
  </form>`;
}

export function monitorListRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  app.get(urls.monitors, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Monitors', 'monitors');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const principal = sessionOf(req).principal;
    const projectId = pc.project.id;
    const page = pageNumber.safeParse(queryText(req, 'page')).data ?? 1;
    const s = searchOf(req);
    const { items, total } = await monitors.searchMonitors(ctx, principal, projectId, s, { page, per_page: PER_PAGE });
    const ids = items.map((m) => m.id);
    const [slots, uptime, regions] = await Promise.all([
      projectSparklines(ctx, principal, projectId, ids),
      projectUptimeWindows(ctx, principal, projectId, ids),
      listRegions(ctx),
    ]);
    const body = live({ items, total, slots, uptime, regions, now: ctx.now() }, s, page);
    if (queryText(req, 'fragment')) return sendHtml(reply, body);
    const filtered = Boolean(s.status || s.name || s.tag);
    const all = filtered ? (await monitors.listMonitors(ctx, principal, projectId, { page: 1, per_page: 1 })).total : total;
    const tags = all > 0 ? await monitors.projectTags(ctx, principal, projectId) : [];
    const newButton = html`<a class="btn btn-primary" href="${urls.newMonitor}">New monitor</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Monitors', { sub: html`HTTP checks of <strong>${pc.project.name}</strong>, from every region with a probe agent.`, actions: all > 0 ? newButton : '' })}
        ${listOrEmpty(
          all,
          emptyState(
            'No monitors yet',
            'A monitor checks a URL every minute from your probe agents and tells you when it stops answering as expected.',
            newButton,
          ),
          () =>
            html`${filters(s, tags)}
              <div data-live="${urls.monitors}?${searchQuery(s, page, { fragment: '1' })}" data-live-every="5000">${body}</div>`,
        )}`,
      ),
    );
  });
}
