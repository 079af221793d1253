import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import type { Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { listPings } from '../../heartbeats/pings/service.ts';
import type { PingLogEntry } from '../../heartbeats/pings/schemas.ts';
import { badgeSlug } from '../../status-pages/badges.ts';
import { copyRow, formatDuration, snippet, fromNow, heartbeatPill, heartbeatSchedule, postButton, timeTag } from '../components.ts';
import { idParam, queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';
import { badgeCard } from './badges.ts';

const curl = (url: string) => `curl -fsS -m 10 --retry 5 -o /dev/null ${url}`;

/** Ready-to-paste ways of calling the ping URLs from a job. */
function howToPing(h: Heartbeat): Html {
  const job = '/path/to/job.sh';
  const cron = h.cron_schedule ?? '0 * * * *';
  return html`<div class="card">
    <div class="card-head"><h2>Ping URLs</h2></div>
    <div class="card-body">
      <p class="muted">
        Call the success URL when the job has done its work. Optionally call <code>/start</code> when it begins (to measure run time and
        catch jobs that hang) and <code>/fail</code> when it fails.
      </p>
      <div class="two-col">
        <div>
          <h3>Success</h3>
          ${copyRow(h.ping_url, 'Copy', 'ping-url')}
          <h3>Start</h3>
          ${copyRow(h.start_url, 'Copy', 'start-url')}
          <h3>Fail</h3>
          ${copyRow(h.fail_url, 'Copy', 'fail-url')}
        </div>
        <div>
          <h3>With curl</h3>
          ${snippet(curl(h.ping_url), 'curl')}
          <h3>In a crontab</h3>
          ${snippet(`${cron} ${job} && ${curl(h.ping_url)}`, 'crontab')}
          <h3>Start, then the exit code</h3>
          ${snippet(`${curl(h.start_url)}\n${job}; ${curl(`${h.ping_url}/$?`)}`)}
          <p class="faint">An exit code at the end of the URL counts as success when it is 0, as a failure otherwise.</p>
        </div>
      </div>
    </div>
  </div>`;
}

function pingLog(items: readonly PingLogEntry[], now: Date): Html {
  if (items.length === 0) return html`<div class="empty"><p>No pings yet. Call the ping URL from your job and it shows up here.</p></div>`;
  const kindPill = (p: PingLogEntry) =>
    p.kind === 'success'
      ? html`<span class="pill up">Success</span>`
      : p.kind === 'start'
        ? html`<span class="pill running">Start</span>`
        : html`<span class="pill down">Fail${p.exit_code !== null ? html` (${p.exit_code})` : ''}</span>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th>Received</th>
          <th>Kind</th>
          <th class="hide-sm">From</th>
          <th class="hide-sm">Client</th>
          <th class="num hide-sm">Body</th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (p) =>
            html`<tr>
              <td class="nowrap">${timeTag(p.received_at, relativeTime(new Date(p.received_at), now))}</td>
              <td>${kindPill(p)}</td>
              <td class="hide-sm">
                <code>${p.source}</code>${p.region ? html` <span class="tag">${p.region}</span>` : ''}
                <span class="faint">${p.method}</span>
              </td>
              <td class="hide-sm faint">${p.user_agent ?? '–'}</td>
              <td class="num hide-sm" ${p.body ? html` title="${p.body.slice(0, 500)}"` : ''}>${p.body_size ? `${p.body_size} B` : '–'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function live(h: Heartbeat, pings: readonly PingLogEntry[], now: Date): Html {
  return html`<div class="stats">
      <div class="stat">
        <div class="label">Status</div>
        <div class="value">${heartbeatPill(h.status, true)}</div>
      </div>
      <div class="stat">
        <div class="label">Last ping</div>
        <div class="value text">${timeTag(h.last_ping_at, fromNow(h.last_ping_at, now, 'never'))}</div>
      </div>
      <div class="stat">
        <div class="label">Next expected</div>
        <div class="value text">${h.active ? timeTag(h.next_ping_at, fromNow(h.next_ping_at, now, 'not scheduled')) : 'paused'}</div>
      </div>
      <div class="stat">
        <div class="label">Grace period</div>
        <div class="value">${formatDuration(h.grace_period)}</div>
      </div>
    </div>
    <div class="card">
      <div class="card-head">
        <h2>Ping log</h2>
        <span class="faint">the last 100 are kept</span>
      </div>
      ${pingLog(pings, now)}
    </div>`;
}

export function heartbeatDetailRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(`${urls.heartbeats}/:id`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const hb = await heartbeats.getHeartbeat(ctx, principal, id);
    const now = ctx.now();
    const pings = await listPings(ctx, principal, id, { page: 1, per_page: 25 });
    const body = live(hb, pings.items, now);
    if (queryText(req, 'fragment')) return sendHtml(reply, body);

    const pc = await pageContext(req, deps, hb.name, 'heartbeats');
    const csrf = pc.session.csrfToken;
    const base = urls.heartbeat(id);
    const actions = html`<a class="btn" href="${base}/edit">Edit</a>
      ${hb.active ? postButton({ action: `${base}/pause`, label: 'Pause', csrf }) : postButton({ action: `${base}/resume`, label: 'Resume', csrf, kind: 'primary' })}
      ${postButton({ action: `${base}/delete`, label: 'Delete', csrf, kind: 'danger', confirm: `Delete the heartbeat “${hb.name}”? Jobs calling its URLs will get 404.` })}`;
    const slug = await badgeSlug(ctx, principal, { heartbeatId: id });
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(hb.name, { sub: heartbeatSchedule(hb), actions })}
          <div data-live="${base}?fragment=1" data-live-every="5000">${body}</div>
          ${howToPing(hb)}
          <div class="two-col">
            <div class="card">
              <div class="card-head"><h2>Settings</h2></div>
              <div class="card-body">
                <dl class="facts">
                  <dt>Schedule</dt>
                  <dd>${heartbeatSchedule(hb)}</dd>
                  <dt>Time zone</dt>
                  <dd>${hb.timezone}</dd>
                  <dt>Grace period</dt>
                  <dd>${formatDuration(hb.grace_period)}</dd>
                  <dt>Heartbeat id</dt>
                  <dd><code>${hb.id}</code></dd>
                </dl>
              </div>
            </div>
            ${badgeCard(deps, csrf, base, slug)}
          </div>`,
      ),
    );
  });

  const setActive = (active: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const hb = await heartbeats.updateHeartbeat(ctx, session.principal, id, { active });
    await setFlash(
      ctx.sql,
      session.id,
      active ? `“${hb.name}” resumed.` : `“${hb.name}” paused: missed pings raise no alerts until you resume it.`,
    );
    return reply.redirect(urls.heartbeat(id), 303);
  };
  app.post(`${urls.heartbeats}/:id/pause`, setActive(false));
  app.post(`${urls.heartbeats}/:id/resume`, setActive(true));

  app.post(`${urls.heartbeats}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const hb = await heartbeats.getHeartbeat(ctx, session.principal, id);
    await heartbeats.deleteHeartbeat(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Heartbeat “${hb.name}” deleted.`);
    return reply.redirect(urls.heartbeats, 303);
  });
}
