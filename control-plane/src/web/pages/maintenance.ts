import type { FastifyReply, FastifyRequest } from 'fastify';
import { setFlash } from '../../accounts/sessions.ts';
import { dependencyChoices } from '../../dependencies/service.ts';
import { MaintenanceWindowCreateBody, MaintenanceWindowUpdateBody, type MaintenanceWindow } from '../../maintenance/schemas.ts';
import * as maintenance from '../../maintenance/service.ts';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import {
  checkbox,
  csrfInput,
  emptyState,
  field,
  fieldErrors,
  formatDuration,
  formErrorSummary,
  postButton,
  timeTag,
} from '../components.ts';
import { idParam, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import type { DependencyChoice } from '../dependency-choices.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, render, type PageContext } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

type Kind = 'one_off' | 'recurring';

interface Values {
  name: string;
  description: string;
  kind: Kind;
  /** `YYYY-MM-DDTHH:MM`, in UTC (a datetime-local field). */
  startsAt: string;
  endsAt: string;
  cron: string;
  durationMinutes: string;
  timezone: string;
  wholeProject: boolean;
  monitorIds: string[];
  heartbeatIds: string[];
  active: boolean;
}

/** An instant as a datetime-local value in UTC, and back. */
const toField = (iso: string | null) => (iso ? iso.slice(0, 16) : '');
const fromField = (v: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v) ? `${v}:00Z` : v);

function valuesOf(w?: MaintenanceWindow): Values {
  return {
    name: w?.name ?? '',
    description: w?.description ?? '',
    kind: w?.kind ?? 'one_off',
    startsAt: toField(w?.starts_at ?? null),
    endsAt: toField(w?.ends_at ?? null),
    cron: w?.cron ?? '0 2 * * 0',
    durationMinutes: w?.duration_seconds ? String(Math.round(w.duration_seconds / 60)) : '60',
    timezone: w?.timezone ?? 'UTC',
    wholeProject: w?.whole_project ?? false,
    monitorIds: w?.monitor_ids ?? [],
    heartbeatIds: w?.heartbeat_ids ?? [],
    active: w?.active ?? true,
  };
}

const list = (f: Form, name: string) => {
  const v = f[name];
  return (Array.isArray(v) ? v : v ? [v] : []).filter((s) => /^[0-9a-f-]{36}$/i.test(s));
};

function formValues(f: Form): Values {
  return {
    name: text(f, 'name'),
    description: text(f, 'description'),
    kind: text(f, 'schedule_kind') === 'recurring' ? 'recurring' : 'one_off',
    startsAt: text(f, 'starts_at'),
    endsAt: text(f, 'ends_at'),
    cron: text(f, 'cron'),
    durationMinutes: text(f, 'duration_minutes'),
    timezone: text(f, 'timezone') || 'UTC',
    wholeProject: text(f, 'whole_project') === 'on',
    monitorIds: list(f, 'monitor_ids'),
    heartbeatIds: list(f, 'heartbeat_ids'),
    active: text(f, 'active') === 'on',
  };
}

/** The REST API's body: one-off or recurring fields, the other kind's cleared. */
function bodyOf(v: Values): Record<string, unknown> {
  const minutes = v.durationMinutes;
  const recurring = v.kind === 'recurring';
  return {
    name: v.name,
    description: v.description,
    starts_at: recurring ? null : fromField(v.startsAt) || null,
    ends_at: recurring ? null : fromField(v.endsAt) || null,
    cron: recurring ? v.cron : null,
    duration_seconds: recurring ? (/^\d+$/.test(minutes) ? Number(minutes) * 60 : minutes || null) : null,
    timezone: v.timezone,
    whole_project: v.wholeProject,
    monitor_ids: v.monitorIds,
    heartbeat_ids: v.heartbeatIds,
    active: v.active,
  };
}

const known = [
  'name',
  'description',
  'starts_at',
  'ends_at',
  'cron',
  'duration_seconds',
  'timezone',
  'whole_project',
  'monitor_ids',
  'heartbeat_ids',
];

function subjectsField(
  name: 'monitor_ids' | 'heartbeat_ids',
  label: string,
  options: readonly DependencyChoice[],
  chosen: readonly string[],
  errors?: FieldErrors,
): Html {
  const errs = fieldErrors(errors, name);
  if (options.length === 0) return html``;
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-${name}">${label}</label>
    <select id="f-${name}" name="${name}" multiple size="${Math.min(6, Math.max(2, options.length))}">
      ${options.map((o) => html`<option value="${o.id}" ${chosen.includes(o.id) ? html` selected` : ''}>${o.name}</option>`)}
    </select>
    ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

function windowForm(
  pc: PageContext,
  opts: { action: string; values: Values; errors?: FieldErrors; editing: boolean; cancel: string; choices: readonly DependencyChoice[] },
): Html {
  const v = opts.values;
  const e = opts.errors;
  const kindRadio = (kind: Kind, label: string) =>
    html`<label class="check"
      ><input type="radio" name="schedule_kind" value="${kind}" ${v.kind === kind ? html` checked` : ''} /> ${label}</label
    >`;
  const descriptionErrors = fieldErrors(e, 'description');
  return html`<form method="post" action="${opts.action}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, known)}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Database upgrade', errors: e, autofocus: !opts.editing })}
    <div class="field${descriptionErrors.length ? ' invalid' : ''}">
      <label for="f-description">Description (optional)</label>
      <textarea id="f-description" name="description" rows="2">${v.description}</textarea>
      <div class="help">Shown on the status page while the window is ahead or runs.</div>
      ${descriptionErrors.map((m) => html`<div class="error">${m}</div>`)}
    </div>
    <fieldset>
      <legend>When</legend>
      <div class="actions">${kindRadio('one_off', 'Once')}${kindRadio('recurring', 'Repeating (cron)')}</div>
      <div data-schedule="one_off" ${v.kind !== 'one_off' ? html` hidden` : ''}>
        <div class="form-row">
          ${field({ name: 'starts_at', label: 'Starts (UTC)', type: 'datetime-local', value: v.startsAt, errors: e })}
          ${field({ name: 'ends_at', label: 'Ends (UTC)', type: 'datetime-local', value: v.endsAt, errors: e, help: 'At most 31 days after the start.' })}
        </div>
      </div>
      <div data-schedule="recurring" ${v.kind !== 'recurring' ? html` hidden` : ''}>
        <div class="form-row">
          ${field({ name: 'cron', label: 'Starts on (cron)', value: v.cron, errors: e, help: 'Five fields: minute hour day-of-month month day-of-week. 0 2 * * 0 is Sundays at 02:00.' })}
          ${field({ name: 'duration_minutes', label: 'Lasts (minutes)', type: 'number', value: v.durationMinutes, min: 1, max: 10080, errors: e?.duration_seconds ? { duration_minutes: e.duration_seconds } : e })}
          ${field({ name: 'timezone', label: 'Time zone', value: v.timezone, errors: e, help: 'IANA name, such as Europe/Berlin; daylight-saving changes are followed.' })}
        </div>
      </div>
    </fieldset>
    <fieldset>
      <legend>What it covers</legend>
      ${checkbox({ name: 'whole_project', label: 'The whole project (every monitor and heartbeat, those added later too)', checked: v.wholeProject })}
      <div class="form-row">
        ${subjectsField(
          'monitor_ids',
          'Monitors',
          opts.choices.filter((c) => c.type === 'monitor'),
          v.monitorIds,
          e,
        )}
        ${subjectsField(
          'heartbeat_ids',
          'Heartbeats',
          opts.choices.filter((c) => c.type === 'heartbeat'),
          v.heartbeatIds,
          e,
        )}
      </div>
      <p class="faint">Checks go on and are stored; alerts wait until the window ends, and are sent then only if still down.</p>
    </fieldset>
    ${checkbox({ name: 'active', label: 'Active', checked: v.active, help: 'A paused window covers nothing.' })}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create window'}</button
      ><a class="btn" href="${opts.cancel}">Cancel</a>
    </div>
  </form>`;
}

function stateOf(w: MaintenanceWindow, now: Date): Html {
  if (!w.active) return html`<span class="pill">Paused</span>`;
  if (w.in_progress) return html`<span class="pill late" data-testid="in-progress">In progress</span>`;
  if (!w.current_or_next) return html`<span class="pill">Over</span>`;
  return html`<span class="pill up">Scheduled</span>
    <div class="faint">${timeTag(w.current_or_next.starts_at, relativeTime(new Date(w.current_or_next.starts_at), now))}</div>`;
}

function scheduleOf(w: MaintenanceWindow): string {
  if (w.kind === 'recurring') return `${w.cron} (${w.timezone}), ${formatDuration(w.duration_seconds ?? 0)} each`;
  return `${w.starts_at} to ${w.ends_at}`;
}

function scopeOf(w: MaintenanceWindow, names: ReadonlyMap<string, string>): string {
  if (w.whole_project) return 'the whole project';
  const all = [...w.monitor_ids, ...w.heartbeat_ids].map((id) => names.get(id) ?? 'deleted');
  if (all.length === 0) return 'nothing';
  return all.length > 4 ? `${all.slice(0, 4).join(', ')} and ${all.length - 4} more` : all.join(', ');
}

/** Maintenance windows of the current project: their list, and a form to make and change one (ADR 0029). */
export function maintenanceRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.maintenance, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Maintenance', 'maintenance');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const principal = sessionOf(req).principal;
    const [{ items }, choices] = await Promise.all([
      maintenance.listWindows(ctx, principal, pc.project.id, { page: 1, per_page: 100 }),
      dependencyChoices(ctx.sql, principal, pc.project.id),
    ]);
    const names = new Map(choices.map((c) => [c.id, c.name]));
    const now = ctx.now();
    const newButton = html`<a class="btn btn-primary" href="${urls.maintenance}/new">New window</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Maintenance', {
          sub: 'Planned work: checks go on, alerts wait until the window ends, uptime leaves the time out, and the status page announces it.',
          actions: items.length ? newButton : '',
        })}
        ${listOrEmpty(
          items.length,
          emptyState('No maintenance windows', 'Plan a deploy or an upgrade so that it pages no one.', newButton),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Status', 'Window', ['When', 'hide-sm'], 'Covers', ''],
                items.map(
                  (w) =>
                    html`<tr data-testid="window">
                      <td>${stateOf(w, now)}</td>
                      <td class="name">${w.name}${w.description ? html`<span class="url">${w.description}</span>` : ''}</td>
                      <td class="hide-sm">${scheduleOf(w)}</td>
                      <td>${scopeOf(w, names)}</td>
                      <td class="actions">
                        <a class="btn btn-sm" href="${urls.maintenance}/${w.id}/edit">Edit</a>
                        ${postButton({ action: `${urls.maintenance}/${w.id}/delete`, label: 'Delete', csrf: pc.session.csrfToken, kind: 'danger', small: true, confirm: `Delete “${w.name}”? One in progress ends now.` })}
                      </td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}`,
      ),
    );
  });

  const formFor = async (req: FastifyRequest, title: string) => {
    const pc = await pageContext(req, deps, title, 'maintenance');
    const choices = pc.project ? await dependencyChoices(ctx.sql, pc.session.principal, pc.project.id) : [];
    return { pc, choices };
  };

  app.get(`${urls.maintenance}/new`, async (req, reply) => {
    const { pc, choices } = await formFor(req, 'New maintenance window');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const form = windowForm(pc, { action: urls.maintenance, values: valuesOf(), editing: false, cancel: urls.maintenance, choices });
    return sendHtml(reply, formPage(pc, pageHead('New maintenance window'), form));
  });

  app.post(urls.maintenance, async (req, reply) => {
    const { pc, choices } = await formFor(req, 'New maintenance window');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    return submitForm(req, reply, deps, {
      schema: MaintenanceWindowCreateBody,
      input: (form) => ({ ...bodyOf(formValues(form)), project_id: projectId }),
      show: (form, errors, status) =>
        sendHtml(
          reply,
          formPage(
            pc,
            pageHead('New maintenance window'),
            windowForm(pc, {
              action: urls.maintenance,
              values: formValues(form),
              errors,
              editing: false,
              cancel: urls.maintenance,
              choices,
            }),
          ),
          status,
        ),
      save: (body) => maintenance.createWindow(ctx, pc.session.principal, body),
      done: (w) => ({ flash: `Maintenance window “${w.name}” created.`, to: urls.maintenance }),
    });
  });

  const editing = async (req: FastifyRequest) => {
    const id = idParam(req);
    const { pc, choices } = await formFor(req, 'Edit maintenance window');
    const w = await maintenance.getWindow(ctx, pc.session.principal, id);
    const action = `${urls.maintenance}/${id}/edit`;
    const page = (values: Values, errors?: FieldErrors) =>
      formPage(
        pc,
        pageHead(html`Edit ${w.name}`),
        windowForm(pc, { action, values, errors, editing: true, cancel: urls.maintenance, choices }),
      );
    return { pc, id, w, page };
  };

  app.get(`${urls.maintenance}/:id/edit`, async (req, reply) => {
    const { w, page } = await editing(req);
    return sendHtml(reply, page(valuesOf(w)));
  });

  app.post(`${urls.maintenance}/:id/edit`, async (req, reply) => {
    const { pc, id, page } = await editing(req);
    return submitForm(req, reply, deps, {
      schema: MaintenanceWindowUpdateBody,
      input: (form) => bodyOf(formValues(form)),
      show: (form, errors, status) => sendHtml(reply, page(formValues(form), errors), status),
      save: (body) => maintenance.updateWindow(ctx, pc.session.principal, id, body),
      done: (w) => ({ flash: `Maintenance window “${w.name}” saved.`, to: urls.maintenance }),
    });
  });

  app.post(`${urls.maintenance}/:id/delete`, async (req: FastifyRequest, reply: FastifyReply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const w = await maintenance.getWindow(ctx, session.principal, id);
    await maintenance.deleteWindow(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Maintenance window “${w.name}” deleted.`);
    return reply.redirect(urls.maintenance, 303);
  });
}
