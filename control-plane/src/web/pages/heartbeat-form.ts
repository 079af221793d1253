import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { DEFAULT_GRACE_PERIOD, HeartbeatCreateBody, HeartbeatUpdateBody, type Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import type { Integration } from '../../notifications/integrations/schemas.ts';
import type { SubjectRef } from '../../dependencies/rules.ts';
import { chosenDependencies, dependencyField, projectDependencyChoices, type DependencyChoice } from '../dependency-choices.ts';
import { chosenIntegrations, integrationChoices, projectIntegrations } from '../integration-choices.ts';
import { csrfInput, field, fieldErrors, formErrorSummary } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, type PageContext } from '../page.ts';
import { urls } from '../urls.ts';
import {
  readRunRules,
  runRuleErrors,
  runRuleFieldNames,
  runRulesFields,
  runRuleValuesFrom,
  runRuleValuesOf,
  type RunRuleValues,
} from '../heartbeat-rules.ts';

type Kind = 'cron' | 'period' | 'none';

interface Values {
  name: string;
  kind: Kind;
  cron: string;
  timezone: string;
  period: string;
  grace: string;
  integrationIds: string[];
  dependsOn: SubjectRef[];
  rules: RunRuleValues;
}

function valuesOf(h: Heartbeat | undefined): Values {
  return {
    name: h?.name ?? '',
    kind: !h || h.cron_schedule ? 'cron' : h.period ? 'period' : 'none',
    cron: h?.cron_schedule ?? '0 * * * *',
    timezone: h?.timezone ?? 'UTC',
    period: h?.period ? String(h.period) : '3600',
    grace: String(h?.grace_period ?? DEFAULT_GRACE_PERIOD),
    integrationIds: h?.integration_ids ?? [],
    dependsOn: h?.depends_on ?? [],
    rules: runRuleValuesOf(h),
  };
}

function formValues(form: Form): Values {
  const kind = text(form, 'schedule_kind');
  return {
    name: text(form, 'name'),
    kind: kind === 'period' || kind === 'none' ? kind : 'cron',
    cron: text(form, 'cron_schedule'),
    timezone: text(form, 'timezone') || 'UTC',
    period: text(form, 'period'),
    grace: text(form, 'grace_period'),
    integrationIds: chosenIntegrations(form),
    dependsOn: chosenDependencies(form),
    rules: runRuleValuesFrom(form),
  };
}

const num = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);

/**
 * The REST API's body for these values: cron or period, whichever kind was chosen, and the run
 * rules (`stored`: the heartbeat being edited, whose values left as shown are sent as stored).
 */
function bodyOf(v: Values, stored?: Heartbeat): Record<string, unknown> {
  return {
    ...readRunRules(v.rules, stored).body,
    name: v.name,
    grace_period: num(v.grace),
    cron_schedule: v.kind === 'cron' ? v.cron : null,
    period: v.kind === 'period' ? num(v.period) : null,
    timezone: v.timezone,
    integration_ids: v.integrationIds,
    depends_on: v.dependsOn,
  };
}

const known = ['integration_ids', 'name', 'cron_schedule', 'timezone', 'period', 'grace_period', 'depends_on', ...runRuleFieldNames];

/** The errors under the form's fields: the API's, with the run rules' moved to the form's names and rows. */
const formErrors = (fields: Form, errors: FieldErrors): FieldErrors => runRuleErrors(errors, readRunRules(runRuleValuesFrom(fields)).rows);

/** What the page finds wrong itself in the run rules (a percentage, a list of exit codes). */
const ownErrors = (fields: Form): FieldErrors => readRunRules(runRuleValuesFrom(fields)).problems;

function kindRadio(v: Values, kind: Kind, label: string): Html {
  return html`<label class="check"
    ><input type="radio" name="schedule_kind" value="${kind}" ${v.kind === kind ? html` checked` : ''} /> ${label}</label
  >`;
}

function heartbeatForm(
  pc: PageContext,
  opts: {
    action: string;
    values: Values;
    errors?: Record<string, string[]>;
    editing: boolean;
    cancel: string;
    integrations: readonly Integration[];
    choices: readonly DependencyChoice[];
    self: string | null;
  },
): Html {
  const v = opts.values;
  const e = opts.errors;
  return html`<form method="post" action="${opts.action}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, known)}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Nightly backup', errors: e, autofocus: !opts.editing })}
    <fieldset>
      <legend>When does the job run?</legend>
      <div class="actions">
        ${kindRadio(v, 'cron', 'On a cron schedule')}${kindRadio(v, 'period', 'Every N seconds')}${kindRadio(v, 'none', 'No fixed schedule')}
      </div>
      <div data-schedule="cron" ${v.kind !== 'cron' ? html` hidden` : ''}>
        <div class="form-row">
          ${field({ name: 'cron_schedule', label: 'Cron expression', value: v.cron, errors: e, help: 'Five fields (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly.' })}
          ${field({ name: 'timezone', label: 'Time zone', value: v.timezone, errors: e, help: 'IANA name, such as Europe/Berlin.' })}
        </div>
      </div>
      <div data-schedule="period" ${v.kind !== 'period' ? html` hidden` : ''}>
        ${field({ name: 'period', label: 'Period (seconds)', type: 'number', value: v.period, min: 60, errors: e, help: 'How often the job runs, at least 60.' })}
      </div>
      <div data-schedule="none" ${v.kind !== 'none' ? html` hidden` : ''}>
        <p class="muted">The heartbeat is only watched once a next expected ping is known (set one through the API).</p>
      </div>
      ${fieldErrors(e, 'schedule_kind').map((m) => html`<div class="error">${m}</div>`)}
    </fieldset>
    ${integrationChoices(opts.integrations, v.integrationIds)} ${dependencyField(opts.choices, v.dependsOn, opts.self, e)}
    ${field({ name: 'grace_period', label: 'Grace period (seconds)', type: 'number', value: v.grace, min: 60, max: 86400, errors: e, help: 'How long after the expected time to wait before raising an alert: 60 to 86400.' })}
    ${runRulesFields(v.rules, e)}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create heartbeat'}</button>
      <a class="btn" href="${opts.cancel}">Cancel</a>
    </div>
  </form>`;
}

type FormOf = (values: Values, errors?: FieldErrors) => Html;

export function heartbeatFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  /** What the new-heartbeat page and its post share: the page and the form for the current project. */
  async function creating(req: FastifyRequest): Promise<{ pc: PageContext; form: FormOf }> {
    const pc = await pageContext(req, deps, 'New heartbeat', 'heartbeats');
    const integrations = pc.project ? await projectIntegrations(deps, pc.session.principal, pc.project.id) : [];
    const choices = pc.project ? await projectDependencyChoices(deps, pc.session.principal, pc.project.id) : [];
    const form: FormOf = (values, errors) =>
      heartbeatForm(pc, {
        action: urls.heartbeats,
        values,
        errors,
        editing: false,
        cancel: urls.heartbeats,
        integrations,
        choices,
        self: null,
      });
    return { pc, form };
  }

  /** What the edit page and its post share: the heartbeat (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest): Promise<{ pc: PageContext; id: string; hb: Heartbeat; page: FormOf }> {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit heartbeat', 'heartbeats');
    const hb = await heartbeats.getHeartbeat(ctx, pc.session.principal, id);
    const integrations = await projectIntegrations(deps, pc.session.principal, hb.project_id);
    const choices = await projectDependencyChoices(deps, pc.session.principal, hb.project_id);
    const action = `${urls.heartbeat(id)}/edit`;
    const page: FormOf = (values, errors) =>
      formPage(
        pc,
        pageHead(html`Edit ${hb.name}`),
        heartbeatForm(pc, { action, values, errors, editing: true, cancel: urls.heartbeat(id), integrations, choices, self: id }),
      );
    return { pc, id, hb, page };
  }

  app.get(urls.newHeartbeat, async (req, reply) => {
    const { pc, form } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const head = pageHead('New heartbeat', { sub: html`In <strong>${pc.project.name}</strong>` });
    return sendHtml(reply, formPage(pc, head, form(valuesOf(undefined))));
  });

  app.post(urls.heartbeats, async (req, reply) => {
    const { pc, form } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    return submitForm(req, reply, deps, {
      schema: HeartbeatCreateBody,
      input: (fields) => ({ ...bodyOf(formValues(fields)), project_id: projectId }),
      check: ownErrors,
      show: (fields, errors, status) =>
        sendHtml(reply, formPage(pc, pageHead('New heartbeat'), form(formValues(fields), formErrors(fields, errors))), status),
      save: (body) => heartbeats.createHeartbeat(ctx, pc.session.principal, body),
      done: (hb) => ({ flash: `Heartbeat “${hb.name}” created. Add its ping URL to your job.`, to: urls.heartbeat(hb.id) }),
    });
  });

  app.get(`${urls.heartbeats}/:id/edit`, async (req, reply) => {
    const { hb, page } = await editing(req);
    return sendHtml(reply, page(valuesOf(hb)));
  });

  app.post(`${urls.heartbeats}/:id/edit`, async (req, reply) => {
    const { pc, id, hb, page } = await editing(req);
    return submitForm(req, reply, deps, {
      schema: HeartbeatUpdateBody,
      input: (fields) => bodyOf(formValues(fields), hb),
      check: ownErrors,
      show: (fields, errors, status) => sendHtml(reply, page(formValues(fields), formErrors(fields, errors)), status),
      save: (body) => heartbeats.updateHeartbeat(ctx, pc.session.principal, id, body),
      done: (updated) => ({ flash: `Heartbeat “${updated.name}” saved.`, to: urls.heartbeat(id) }),
    });
  });
}
