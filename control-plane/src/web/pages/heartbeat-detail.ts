import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import type { Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import { subjectMaintenance } from '../../maintenance/service.ts';
import { openAlertsOfSubject } from '../../alerts/service.ts';
import { alertPanel } from '../alert-panel.ts';
import type { PingLogEntry } from '../../heartbeats/pings/schemas.ts';
import { PING_LOG_SIZE } from '../../heartbeats/pings/service.ts';
import { heartbeatTimeline, type StatusChange, type TimelineEntry } from '../../heartbeats/timeline.ts';
import { badgeSlug } from '../../status-pages/badges.ts';
import {
  copyRow,
  formatBytes,
  formatDuration,
  formatSeconds,
  snippet,
  fromNow,
  heartbeatPill,
  heartbeatSchedule,
  postButton,
  timeTag,
} from '../components.ts';
import { idParam, queryText, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { dataTable } from '../table.ts';
import { dependencyNames, dependsOnLinks } from '../dependency-choices.ts';
import { urls } from '../urls.ts';
import { exitCodesText, runRulesFacts } from '../heartbeat-rules.ts';
import { badgeCard } from './badges.ts';
import { maintenanceNote } from './maintenance.ts';

/** Entries of the log the page shows. */
const EVENTS_SHOWN = 50;

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
          <p class="faint" data-testid="exit-code-help">${exitCodeHelp(h.success_exit_codes)}</p>
          <h3>Runs that overlap: a run id</h3>
          ${snippet(`RID=$(cat /proc/sys/kernel/random/uuid)\n${curl(`"${h.start_url}?rid=$RID"`)}\n${job}; ${curl(`"${h.ping_url}/$??rid=$RID"`)}`, 'rid')}
          <p class="faint">
            Add <code>?rid=</code> and a UUID to a run's <code>/start</code> and to its end: each run is then timed on its own, and the log
            shows which pings belong together.
          </p>
        </div>
      </div>
    </div>
  </div>`;
}

function exitCodeHelp(codes: readonly number[]): string {
  const success = codes.length === 1 ? `it is ${codes[0]}` : `it is one of ${exitCodesText(codes)}`;
  return `An exit code at the end of the URL counts as success when ${success}, as a failure otherwise.`;
}

const changeTexts: Record<StatusChange['status'], Partial<Record<StatusChange['reason'], string>> & { default: string }> = {
  down: {
    missed: 'No ping within the grace period',
    failed: 'The job reported a failure',
    output: "The job's output matched a rule that makes it a failure",
    too_short: 'A run finished sooner than its min duration',
    too_frequent: 'A success came too soon after the previous one',
    too_long: 'Ran longer than its max duration',
    start_timeout: 'Started, but did not finish within the grace period',
    default: 'Went down',
  },
  up: { default: 'A success ping: up again' },
  late: { default: 'The ping is overdue: late, inside the grace period' },
};

function received(p: PingLogEntry): string {
  if (p.kind === 'success') return `Success${p.exit_code !== null ? ` (${p.exit_code})` : ''}`;
  if (p.kind === 'start') return 'Start';
  return `Fail${p.exit_code !== null ? ` (exit ${p.exit_code})` : ''}`;
}

/** Why the rules judged a completion failed: a word or two on the pill, a sentence on hover. */
const reasonTexts: Record<NonNullable<PingLogEntry['reason']>, [short: string, long: string]> = {
  failed: ['exit code', 'Its exit code is not one of the success exit codes.'],
  output: ['output rule', 'Its output matched a rule that makes it a failure.'],
  too_short: ['too short', 'The run took less than the min duration.'],
  too_frequent: ['too frequent', 'It came sooner after the previous success than the too-frequent limit allows.'],
};

/**
 * What was received and, when the rules judged it otherwise, how: "Success → failed: too short".
 * A completion logged before the rules judged pings (no outcome) reads as it was received.
 */
function pingPill(p: PingLogEntry): Html {
  if (p.kind === 'start') return html`<span class="pill running">Start</span>`;
  const judged = p.outcome ?? p.kind;
  const cls = judged === 'success' ? 'up' : 'down';
  if (judged === p.kind) return html`<span class="pill ${cls}">${received(p)}</span>`;
  const reason = p.reason ? reasonTexts[p.reason] : undefined;
  const title = reason?.[1] ?? 'An output rule or the success exit codes make it a success.';
  return html`<span class="pill ${cls}" data-testid="judged" title="${title}"
    >${received(p)} → ${judged === 'fail' ? 'failed' : 'success'}${reason ? `: ${reason[0]}` : ''}</span
  >`;
}

/** A run id, short; the whole id on hover. */
const runId = (rid: string): Html => html`<span class="run-id" title="Run id ${rid}">run <code>${rid.slice(0, 8)}</code></span>`;

/** A ping's line: what it was, how long the run took, where it came from, and its body when it had one. */
function pingEvent(p: Extract<TimelineEntry, { type: 'ping' }>): Html {
  return html`<div class="event-line">
      ${pingPill(p)} ${p.rid ? runId(p.rid) : ''}
      ${p.duration !== null ? html`<span class="duration" title="Since its start ping">ran ${formatSeconds(p.duration)}</span>` : ''}
      <span class="faint event-from"
        >${p.method} from <code>${p.source}</code>${p.region ? html` <span class="tag">${p.region}</span>` : ''}${
          p.user_agent ? html` · ${p.user_agent}` : ''
        }</span
      >
    </div>
    ${
      p.body_size > 0
        ? html`<details class="ping-body" data-key="${p.received_at}">
            <summary>Body, ${formatBytes(p.body_size)}${p.body_size > Buffer.byteLength(p.body, 'utf8') ? ' (truncated)' : ''}</summary>
            <pre>${p.body}</pre>
          </details>`
        : ''
    }`;
}

function changeEvent(c: StatusChange): Html {
  const texts = changeTexts[c.status];
  return html`<div class="event-line">${heartbeatPill(c.status)} <span>${texts[c.reason] ?? texts.default}</span></div>`;
}

/** The heartbeat's log: pings and status changes, newest first. */
function timeline(entries: readonly TimelineEntry[], now: Date): Html {
  return dataTable(
    ['When', 'Event'],
    entries.map(
      (e) =>
        html`<tr
          class="event ${e.type === 'change' ? `change ${e.status}` : 'ping'}"
          data-event="${e.type === 'ping' ? e.kind : e.status}"
          ${e.type === 'ping' && e.outcome ? html` data-outcome="${e.outcome}"` : ''}
        >
          <td class="when">${timeTag(e.at, relativeTime(new Date(e.at), now))}</td>
          <td>${e.type === 'ping' ? pingEvent(e) : changeEvent(e)}</td>
        </tr>`,
    ),
    { empty: 'No pings yet. Call the ping URL from your job and it shows up here.', className: 'events' },
  );
}

/** Runs under way and failed runs counted towards an alert, while there are any. */
function runs(h: Heartbeat, now: Date): Html {
  if (h.failed_runs === 0 && h.running.length === 0) return html``;
  const limit = h.alert_after_failures;
  return html`<div class="card" data-testid="runs">
    <div class="card-head"><h2>Runs</h2></div>
    <div class="card-body">
      <dl class="facts">
        ${
          h.failed_runs > 0
            ? html`<dt>Failed in a row</dt>
                <dd data-testid="failed-runs">
                  ${h.failed_runs} ${h.failed_runs < limit ? `(it goes down at ${limit})` : `(it went down at ${limit})`}
                </dd>`
            : ''
        }
        ${
          h.running.length > 0
            ? html`<dt>Open</dt>
                <dd>
                  <ul class="open-runs" data-testid="open-runs">
                    ${h.running.map(
                      (r) =>
                        html`<li>
                          ${r.rid ? runId(r.rid) : html`<span class="faint">without a run id</span>`}, started
                          ${timeTag(r.started_at, relativeTime(new Date(r.started_at), now))}
                        </li>`,
                    )}
                  </ul>
                </dd>`
            : ''
        }
      </dl>
    </div>
  </div>`;
}

function live(h: Heartbeat, events: readonly TimelineEntry[], now: Date): Html {
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
    ${runs(h, now)}
    <div class="card">
      <div class="card-head">
        <h2>Events</h2>
        <span class="faint">pings (the last ${PING_LOG_SIZE} are kept) and status changes</span>
      </div>
      ${timeline(events, now)}
    </div>`;
}

export function heartbeatDetailRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(`${urls.heartbeats}/:id`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const hb = await heartbeats.getHeartbeat(ctx, principal, id);
    const now = ctx.now();
    const events = await heartbeatTimeline(ctx, principal, id, EVENTS_SHOWN);
    const body = live(hb, events, now);
    if (queryText(req, 'fragment')) return sendHtml(reply, body);

    const pc = await pageContext(req, deps, hb.name, 'heartbeats');
    const csrf = pc.session.csrfToken;
    const base = urls.heartbeat(id);
    const actions = html`<a class="btn" href="${base}/edit">Edit</a>
      ${hb.active ? postButton({ action: `${base}/pause`, label: 'Pause', csrf }) : postButton({ action: `${base}/resume`, label: 'Resume', csrf, kind: 'primary' })}
      ${postButton({ action: `${base}/delete`, label: 'Delete', csrf, kind: 'danger', confirm: `Delete the heartbeat “${hb.name}”? Jobs calling its URLs will get 404.` })}`;
    const [slug, covered, open] = await Promise.all([
      badgeSlug(ctx, principal, { heartbeatId: id }),
      subjectMaintenance(ctx, principal, hb.project_id, { type: 'heartbeat', id }),
      openAlertsOfSubject(ctx, principal, { type: 'heartbeat', id }),
    ]);
    const names = await dependencyNames(deps, principal, hb.project_id, hb.depends_on);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(hb.name, { sub: heartbeatSchedule(hb), actions })} ${maintenanceNote(covered)}
          <div data-live="${base}?fragment=1" data-live-every="5000">${body}</div>
          ${alertPanel({ base, csrf, open, snoozedUntil: hb.snoozed_until })} ${howToPing(hb)}
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
                  ${runRulesFacts(hb)}
                  <dt>Depends on</dt>
                  <dd data-testid="depends-on">${dependsOnLinks(hb.depends_on, names)}</dd>
                  <dt>Heartbeat id</dt>
                  <dd><code>${hb.id}</code></dd>
                </dl>
              </div>
            </div>
            ${badgeCard(deps, csrf, base, slug, { type: 'heartbeat', name: hb.name })}
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
