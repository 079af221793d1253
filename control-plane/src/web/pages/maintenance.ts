import type { MaintenanceWindow } from '../../maintenance/schemas.ts';
import * as maintenance from '../../maintenance/service.ts';
import type { App } from '../../platform/http/context.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { emptyState, formatDuration, fromNow, postButton, timeTag } from '../components.ts';
import { idParam, sendHtml, sessionOf, type WebDeps } from '../context.ts';
import { html, join, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render } from '../page.ts';
import { projectSubjects, type ProjectSubjects } from '../subject-choices.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';
import { wallTime } from '../zoned-time.ts';

/** More windows than a project keeps in practice; past it, the list says how many it leaves out. */
const PER_PAGE = 100;

/** An instant as the time of the window's zone ("2030-01-31 22:00", the zone named unless it is nearby); UTC on hover. */
export function zoned(iso: string, tz: string, withZone = true): Html {
  const local = wallTime(Date.parse(iso), tz).replace('T', ' ');
  return html`<span class="nowrap">${timeTag(iso, withZone ? `${local} ${tz}` : local)}</span>`;
}

function statePill(w: MaintenanceWindow): Html {
  if (!w.active) return html`<span class="pill paused">Paused</span>`;
  if (w.in_progress) return html`<span class="pill late">In progress</span>`;
  if (w.current_or_next) return html`<span class="pill">Scheduled</span>`;
  return html`<span class="pill">Over</span>`;
}

function schedule(w: MaintenanceWindow): Html {
  if (w.kind === 'one_off' && w.starts_at && w.ends_at) {
    return html`${zoned(w.starts_at, w.timezone, false)} to ${zoned(w.ends_at, w.timezone, false)}
      <div class="faint">once, ${w.timezone}</div>`;
  }
  return html`<code>${w.cron ?? ''}</code> for ${formatDuration(w.duration_seconds ?? 0)}
    <div class="faint">recurring, ${w.timezone}</div>`;
}

function scope(w: MaintenanceWindow, subjects: ProjectSubjects): Html {
  if (w.whole_project) return html`The whole project`;
  const named = (ids: readonly string[], all: ProjectSubjects['monitors'], link: (id: string) => string) => {
    const byId = new Map(all.map((s) => [s.id, s.name]));
    const known = ids.filter((id) => byId.has(id));
    return { links: known.map((id) => html`<a href="${link(id)}">${byId.get(id)}</a>`), gone: ids.length - known.length };
  };
  const ms = named(w.monitor_ids, subjects.monitors, urls.monitor);
  const hs = named(w.heartbeat_ids, subjects.heartbeats, urls.heartbeat);
  const gone = ms.gone + hs.gone;
  return html`${ms.links.length ? html`<div>Monitors: ${join(ms.links, ', ')}</div>` : ''}
  ${hs.links.length ? html`<div>Heartbeats: ${join(hs.links, ', ')}</div>` : ''}
  ${gone ? html`<div class="faint">${gone} deleted monitor${gone === 1 ? '' : 's'} or heartbeat${gone === 1 ? '' : 's'}</div>` : ''}`;
}

function nowOrNext(w: MaintenanceWindow, now: Date): Html {
  const run = w.current_or_next;
  if (!run) return html`<span class="faint">${w.active ? 'none ahead' : 'paused'}</span>`;
  if (w.in_progress) {
    return html`until ${zoned(run.ends_at, w.timezone, false)}
      <div class="faint">${fromNow(run.ends_at, now)}</div>`;
  }
  return html`next ${zoned(run.starts_at, w.timezone, false)}
    <div class="faint">${fromNow(run.starts_at, now)}</div>`;
}

/** A monitor's or heartbeat's page: one line when maintenance covers it now or is ahead of it. */
export function maintenanceNote(m: maintenance.SubjectMaintenance | null): Html {
  if (!m) return html``;
  const tz = m.window.timezone;
  const name = html`<a href="${urls.maintenance}#w-${m.window.id}">${m.window.name}</a>`;
  return html`<p class="muted" data-testid="maintenance">
    ${
      m.in_progress
        ? html`<span class="pill late">In maintenance</span> until ${zoned(m.ends_at, tz)} (${name}): no alerts are sent meanwhile.`
        : html`Next maintenance: ${zoned(m.starts_at, tz)} to ${zoned(m.ends_at, tz)} (${name}).`
    }
  </p>`;
}

/** Maintenance windows of the current project: what each covers, when, and whether one runs now. */
export function maintenanceRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.maintenance, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Maintenance', 'maintenance');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const principal = sessionOf(req).principal;
    const [{ items, total }, subjects] = await Promise.all([
      maintenance.listWindows(ctx, principal, pc.project.id, { page: 1, per_page: PER_PAGE }),
      projectSubjects(deps, principal, pc.project.id),
    ]);
    const now = ctx.now();
    const csrf = pc.session.csrfToken;
    const newButton = html`<a class="btn btn-primary" href="${urls.newMaintenance}">New window</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Maintenance', {
          sub: 'Planned work: while a window covers a monitor or heartbeat, checks go on but no alert is sent, and the time is left out of uptime.',
          actions: items.length ? newButton : '',
        })}
        ${listOrEmpty(
          items.length,
          emptyState(
            'No maintenance windows yet',
            'Plan a window, once or on a cron schedule, so that planned work pages nobody and does not count as downtime.',
            newButton,
          ),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Status', 'Window', 'When', 'Covers', 'Now or next', ''],
                items.map(
                  (w) =>
                    html`<tr id="w-${w.id}" data-window="${w.id}">
                      <td>${statePill(w)}</td>
                      <td class="name">
                        <a href="${urls.maintenanceWindow(w.id)}/edit">${w.name}</a
                        >${w.description ? html`<span class="url">${w.description}</span>` : ''}
                      </td>
                      <td>${schedule(w)}</td>
                      <td>${scope(w, subjects)}</td>
                      <td class="when">${nowOrNext(w, now)}</td>
                      <td class="nowrap">
                        <a class="btn btn-sm" href="${urls.maintenanceWindow(w.id)}/edit">Edit</a>
                        ${postButton({ action: `${urls.maintenanceWindow(w.id)}/delete`, label: 'Delete', csrf, kind: 'danger', small: true, confirm: `Delete the maintenance window “${w.name}”?${w.in_progress ? ' It ends now.' : ''}` })}
                      </td>
                    </tr>`,
                ),
              )}
              ${total > items.length ? html`<div class="card-body faint">The first ${items.length} of ${total} windows, oldest first.</div>` : ''}
            </div>`,
        )}`,
      ),
    );
  });

  app.post(`${urls.maintenance}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const w = await maintenance.getWindow(ctx, session.principal, id);
    await maintenance.deleteWindow(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Maintenance window “${w.name}” deleted.`);
    return reply.redirect(urls.maintenance, 303);
  });
}
