import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { zodIssuesToErrors } from '../../platform/http/error-handler.ts';
import { validationMessage } from '../../platform/http/validation.ts';
import { DEFAULT_GRACE_PERIOD, HeartbeatCreateBody, HeartbeatUpdateBody, type Heartbeat } from '../../heartbeats/schemas.ts';
import * as heartbeats from '../../heartbeats/service.ts';
import type { Integration } from '../../notifications/integrations/schemas.ts';
import { chosenIntegrations, integrationChoices, projectIntegrations } from '../integration-choices.ts';
import { csrfInput, field, fieldErrors, formErrorSummary } from '../components.ts';
import { formOf, idParam, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { noProject, pageContext, render, type PageContext } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';

type Kind = 'cron' | 'period' | 'none';

interface Values {
  name: string;
  kind: Kind;
  cron: string;
  timezone: string;
  period: string;
  grace: string;
  integrationIds: string[];
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
  };
}

const num = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);

/** The REST API's body for these values: cron or period, whichever kind was chosen. */
function bodyOf(v: Values): Record<string, unknown> {
  return {
    name: v.name,
    grace_period: num(v.grace),
    cron_schedule: v.kind === 'cron' ? v.cron : null,
    period: v.kind === 'period' ? num(v.period) : null,
    timezone: v.timezone,
    integration_ids: v.integrationIds,
  };
}

const known = ['integration_ids', 'name', 'cron_schedule', 'timezone', 'period', 'grace_period'];

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
          ${field({ name: 'cron_schedule', label: 'Cron expression', value: v.cron, errors: e, help: 'Five fields: minute hour day-of-month month day-of-week.' })}
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
    ${integrationChoices(opts.integrations, v.integrationIds)}
    ${field({ name: 'grace_period', label: 'Grace period (seconds)', type: 'number', value: v.grace, min: 60, max: 86400, errors: e, help: 'How long after the expected time to wait before raising an alert: 60 to 86400.' })}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create heartbeat'}</button>
      <a class="btn" href="${opts.cancel}">Cancel</a>
    </div>
  </form>`;
}

export function heartbeatFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  const card = (body: Html) => html`<div class="card"><div class="card-body">${body}</div></div>`;

  app.get(urls.newHeartbeat, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New heartbeat', 'heartbeats');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const choices = await projectIntegrations(deps, pc.session.principal, pc.project.id);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('New heartbeat', { sub: html`In <strong>${pc.project.name}</strong>` })}${card(heartbeatForm(pc, { action: urls.heartbeats, values: valuesOf(undefined), editing: false, cancel: urls.heartbeats, integrations: choices }))}`,
      ),
    );
  });

  app.post(urls.heartbeats, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New heartbeat', 'heartbeats');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const choices = await projectIntegrations(deps, pc.session.principal, pc.project.id);
    const values = formValues(formOf(req));
    const again = (errors: Record<string, string[]>) =>
      sendHtml(
        reply,
        render(
          pc,
          html`${pageHead('New heartbeat')}${card(heartbeatForm(pc, { action: urls.heartbeats, values, errors, editing: false, cancel: urls.heartbeats, integrations: choices }))}`,
        ),
        422,
      );
    const parsed = HeartbeatCreateBody.safeParse({ ...bodyOf(values), project_id: pc.project.id }, { error: validationMessage });
    if (!parsed.success) return again(zodIssuesToErrors(parsed.error.issues));
    try {
      const hb = await heartbeats.createHeartbeat(ctx, sessionOf(req).principal, parsed.data);
      await setFlash(ctx.sql, pc.session.id, `Heartbeat “${hb.name}” created. Add its ping URL to your job.`);
      return reply.redirect(urls.heartbeat(hb.id), 303);
    } catch (err) {
      if (err instanceof AppError && err.code === 'VALIDATION' && err.errors) return again(err.errors);
      throw err;
    }
  });

  app.get(`${urls.heartbeats}/:id/edit`, async (req, reply) => {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit heartbeat', 'heartbeats');
    const hb = await heartbeats.getHeartbeat(ctx, sessionOf(req).principal, id);
    const choices = await projectIntegrations(deps, pc.session.principal, hb.project_id);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(html`Edit ${hb.name}`)}${card(heartbeatForm(pc, { action: `${urls.heartbeat(id)}/edit`, values: valuesOf(hb), editing: true, cancel: urls.heartbeat(id), integrations: choices }))}`,
      ),
    );
  });

  app.post(`${urls.heartbeats}/:id/edit`, async (req, reply) => {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit heartbeat', 'heartbeats');
    const principal = sessionOf(req).principal;
    const hb = await heartbeats.getHeartbeat(ctx, principal, id);
    const choices = await projectIntegrations(deps, principal, hb.project_id);
    const values = formValues(formOf(req));
    const again = (errors: Record<string, string[]>) =>
      sendHtml(
        reply,
        render(
          pc,
          html`${pageHead(html`Edit ${hb.name}`)}${card(heartbeatForm(pc, { action: `${urls.heartbeat(id)}/edit`, values, errors, editing: true, cancel: urls.heartbeat(id), integrations: choices }))}`,
        ),
        422,
      );
    const parsed = HeartbeatUpdateBody.safeParse(bodyOf(values), { error: validationMessage });
    if (!parsed.success) return again(zodIssuesToErrors(parsed.error.issues));
    try {
      const updated = await heartbeats.updateHeartbeat(ctx, principal, id, parsed.data);
      await setFlash(ctx.sql, pc.session.id, `Heartbeat “${updated.name}” saved.`);
      return reply.redirect(urls.heartbeat(id), 303);
    } catch (err) {
      if (err instanceof AppError && err.code === 'VALIDATION' && err.errors) return again(err.errors);
      throw err;
    }
  });
}
