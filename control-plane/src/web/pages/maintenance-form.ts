import type { FastifyRequest } from 'fastify';
import { validateTimezone } from '../../heartbeats/schedule.ts';
import {
  MaintenanceWindowCreateBody,
  MaintenanceWindowUpdateBody,
  MAX_DURATION_SECONDS,
  type MaintenanceWindow,
} from '../../maintenance/schemas.ts';
import * as maintenance from '../../maintenance/service.ts';
import type { App } from '../../platform/http/context.ts';
import { checkbox, csrfInput, field, fieldErrors, formErrorSummary } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, type PageContext } from '../page.ts';
import { chosenIds, projectSubjects, subjectChoices, type ProjectSubjects } from '../subject-choices.ts';
import { urls } from '../urls.ts';
import { fromWallTime, wallTime } from '../zoned-time.ts';

type Kind = MaintenanceWindow['kind'];
type Scope = 'project' | 'subjects';

interface Values {
  name: string;
  description: string;
  kind: Kind;
  startsAt: string;
  endsAt: string;
  cron: string;
  duration: string;
  timezone: string;
  scope: Scope;
  monitorIds: string[];
  heartbeatIds: string[];
  active: boolean;
}

function valuesOf(w: MaintenanceWindow | undefined, subjects: ProjectSubjects): Values {
  const local = (iso: string | null | undefined) => (iso && w ? wallTime(Date.parse(iso), w.timezone) : '');
  const hasSubjects = subjects.monitors.length + subjects.heartbeats.length > 0;
  return {
    name: w?.name ?? '',
    description: w?.description ?? '',
    kind: w?.kind ?? 'one_off',
    startsAt: local(w?.starts_at),
    endsAt: local(w?.ends_at),
    cron: w?.cron ?? '0 3 * * 0',
    duration: String(w?.duration_seconds ?? 7200),
    timezone: w?.timezone ?? 'UTC',
    scope: (w ? w.whole_project : !hasSubjects) ? 'project' : 'subjects',
    monitorIds: w?.monitor_ids ?? [],
    heartbeatIds: w?.heartbeat_ids ?? [],
    active: w?.active ?? true,
  };
}

function formValues(form: Form): Values {
  return {
    name: text(form, 'name'),
    description: text(form, 'description'),
    kind: text(form, 'schedule_kind') === 'recurring' ? 'recurring' : 'one_off',
    startsAt: text(form, 'starts_at'),
    endsAt: text(form, 'ends_at'),
    cron: text(form, 'cron'),
    duration: text(form, 'duration_seconds'),
    timezone: text(form, 'timezone') || 'UTC',
    scope: text(form, 'scope') === 'project' ? 'project' : 'subjects',
    monitorIds: chosenIds(form, 'monitor_ids'),
    heartbeatIds: chosenIds(form, 'heartbeat_ids'),
    active: text(form, 'active') === 'on',
  };
}

const num = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);

/**
 * The REST API's body for these values: the fields of the kind chosen (the other kind's cleared,
 * so an edit can turn one kind into the other), the start and end read in the time zone given.
 */
function bodyOf(v: Values): Record<string, unknown> {
  // With a zone the schema refuses, its message is the one shown: the times are read in UTC meanwhile.
  const zone = validateTimezone(v.timezone) ? v.timezone : 'UTC';
  const instant = (local: string) => {
    if (local === '') return null;
    const ms = fromWallTime(local, zone);
    return ms === null ? local : new Date(ms).toISOString();
  };
  const oneOff = v.kind === 'one_off';
  const whole = v.scope === 'project';
  return {
    name: v.name,
    description: v.description,
    starts_at: oneOff ? instant(v.startsAt) : null,
    ends_at: oneOff ? instant(v.endsAt) : null,
    cron: oneOff ? null : v.cron,
    duration_seconds: oneOff ? null : num(v.duration),
    timezone: v.timezone,
    whole_project: whole,
    monitor_ids: whole ? [] : v.monitorIds,
    heartbeat_ids: whole ? [] : v.heartbeatIds,
    active: v.active,
  };
}

/** What the form itself requires of the kind and scope chosen; every other rule is the API's. */
function check(form: Form): FieldErrors {
  const v = formValues(form);
  const errors: FieldErrors = {};
  if (v.kind === 'one_off') {
    for (const [name, value, what] of [
      ['starts_at', v.startsAt, 'starts'],
      ['ends_at', v.endsAt, 'ends'],
    ] as const) {
      if (value === '') errors[name] = [`Enter when the window ${what}.`];
      else if (fromWallTime(value, 'UTC') === null) errors[name] = ['Enter a date and a time, such as 2030-01-31T22:00.'];
    }
  } else {
    if (v.cron === '') errors.cron = ['Enter a cron expression, such as 0 3 * * 0.'];
    if (v.duration === '') errors.duration_seconds = ['Enter how long each occurrence lasts, in seconds.'];
  }
  if (v.scope === 'subjects' && v.monitorIds.length === 0 && v.heartbeatIds.length === 0) {
    errors.monitor_ids = ['Choose at least one monitor or heartbeat, or the whole project.'];
  }
  return errors;
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

function radio(name: string, value: string, checked: boolean, label: string): Html {
  return html`<label class="check"
    ><input type="radio" name="${name}" value="${value}" ${checked ? html` checked` : ''} /> ${label}</label
  >`;
}

function windowForm(
  pc: PageContext,
  opts: { action: string; values: Values; errors?: FieldErrors; editing: boolean; cancel: string; subjects: ProjectSubjects },
): Html {
  const v = opts.values;
  const e = opts.errors;
  const descriptionErrors = fieldErrors(e, 'description');
  return html`<form method="post" action="${opts.action}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, known)}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Database upgrade', errors: e, autofocus: !opts.editing })}
    <div class="field${descriptionErrors.length ? ' invalid' : ''}">
      <label for="f-description">Description <span class="faint">(optional)</span></label>
      <textarea id="f-description" name="description" rows="2">${v.description}</textarea>
      <div class="help">Shown on the status page while the window is ahead or runs.</div>
      ${descriptionErrors.map((m) => html`<div class="error">${m}</div>`)}
    </div>
    <fieldset>
      <legend>When</legend>
      <div class="actions">
        ${radio('schedule_kind', 'one_off', v.kind === 'one_off', 'Once')}${radio('schedule_kind', 'recurring', v.kind === 'recurring', 'Again and again, on a cron schedule')}
      </div>
      <div data-schedule="one_off" ${v.kind !== 'one_off' ? html` hidden` : ''}>
        <div class="form-row">
          ${field({ name: 'starts_at', label: 'Starts', type: 'datetime-local', value: v.startsAt, errors: e })}
          ${field({ name: 'ends_at', label: 'Ends', type: 'datetime-local', value: v.endsAt, errors: e, help: 'At most 31 days after the start.' })}
        </div>
      </div>
      <div data-schedule="recurring" ${v.kind !== 'recurring' ? html` hidden` : ''}>
        <div class="form-row">
          ${field({ name: 'cron', label: 'Cron expression', value: v.cron, errors: e, help: 'When each occurrence starts. Five fields: minute hour day-of-month month day-of-week.' })}
          ${field({ name: 'duration_seconds', label: 'Duration (seconds)', type: 'number', value: v.duration, min: 60, max: MAX_DURATION_SECONDS, errors: e, help: `How long each occurrence lasts: 60 to ${MAX_DURATION_SECONDS} (7 days); 3600 is an hour.` })}
        </div>
      </div>
      ${field({ name: 'timezone', label: 'Time zone', value: v.timezone, errors: e, help: 'IANA name, such as Europe/Berlin: the times above are read in it, daylight-saving changes included.' })}
    </fieldset>
    <fieldset>
      <legend>What it covers</legend>
      <div class="actions">
        ${radio('scope', 'project', v.scope === 'project', 'The whole project, monitors and heartbeats added later included')}${radio('scope', 'subjects', v.scope === 'subjects', 'The monitors and heartbeats chosen below')}
      </div>
      ${subjectChoices({ name: 'monitor_ids', label: 'Monitors', all: opts.subjects.monitors, chosen: v.monitorIds, none: html`No monitors in this project yet.`, errors: e })}
      ${subjectChoices({ name: 'heartbeat_ids', label: 'Heartbeats', all: opts.subjects.heartbeats, chosen: v.heartbeatIds, none: html`No heartbeats in this project yet.`, errors: e })}
    </fieldset>
    ${checkbox({ name: 'active', label: 'Active', checked: v.active, help: 'Unchecked, the window is paused: it covers nothing until it is checked again.' })}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create window'}</button>
      <a class="btn" href="${opts.cancel}">Cancel</a>
    </div>
  </form>`;
}

type PageOf = (values: Values, errors?: FieldErrors) => Html;

/** New and edit pages of a maintenance window, saved through the maintenance service (the API's rules and messages). */
export function maintenanceFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  async function creating(req: FastifyRequest) {
    const pc = await pageContext(req, deps, 'New maintenance window', 'maintenance');
    if (!pc.project) return { pc, project: null };
    const subjects = await projectSubjects(deps, pc.session.principal, pc.project.id);
    const head = pageHead('New maintenance window', { sub: html`In <strong>${pc.project.name}</strong>` });
    const page: PageOf = (values, errors) =>
      formPage(pc, head, windowForm(pc, { action: urls.maintenance, values, errors, editing: false, cancel: urls.maintenance, subjects }));
    return { pc, project: pc.project, subjects, page };
  }

  /** What the edit page and its post share: the window (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest) {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit maintenance window', 'maintenance');
    const w = await maintenance.getWindow(ctx, pc.session.principal, id);
    const subjects = await projectSubjects(deps, pc.session.principal, w.project_id);
    const action = `${urls.maintenanceWindow(id)}/edit`;
    const page: PageOf = (values, errors) =>
      formPage(
        pc,
        pageHead(html`Edit ${w.name}`),
        windowForm(pc, { action, values, errors, editing: true, cancel: urls.maintenance, subjects }),
      );
    return { pc, id, w, subjects, page };
  }

  app.get(urls.newMaintenance, async (req, reply) => {
    const c = await creating(req);
    if (!c.project) return sendHtml(reply, noProject(c.pc));
    return sendHtml(reply, c.page(valuesOf(undefined, c.subjects)));
  });

  app.post(urls.maintenance, async (req, reply) => {
    const c = await creating(req);
    if (!c.project) return sendHtml(reply, noProject(c.pc));
    const projectId = c.project.id;
    return submitForm(req, reply, deps, {
      schema: MaintenanceWindowCreateBody,
      input: (form) => ({ ...bodyOf(formValues(form)), project_id: projectId }),
      check,
      show: (form, errors, status) => sendHtml(reply, c.page(formValues(form), errors), status),
      save: (body) => maintenance.createWindow(ctx, c.pc.session.principal, body),
      done: (w) => ({ flash: `Maintenance window “${w.name}” created.`, to: urls.maintenance }),
    });
  });

  app.get(`${urls.maintenance}/:id/edit`, async (req, reply) => {
    const { w, subjects, page } = await editing(req);
    return sendHtml(reply, page(valuesOf(w, subjects)));
  });

  app.post(`${urls.maintenance}/:id/edit`, async (req, reply) => {
    const { pc, id, page } = await editing(req);
    return submitForm(req, reply, deps, {
      schema: MaintenanceWindowUpdateBody,
      input: (form) => bodyOf(formValues(form)),
      check,
      show: (form, errors, status) => sendHtml(reply, page(formValues(form), errors), status),
      save: (body) => maintenance.updateWindow(ctx, pc.session.principal, id, body),
      done: (w) => ({ flash: `Maintenance window “${w.name}” saved.`, to: urls.maintenance }),
    });
  });
}
