import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import * as integrations from '../../notifications/integrations/service.ts';
import { ratePeriods, TriggerCreateBody, TriggerUpdateBody, type Trigger, type TriggerEventView } from '../../triggers/schemas.ts';
import * as triggers from '../../triggers/service.ts';
import {
  checkbox,
  copyRow,
  csrfInput,
  emptyState,
  field,
  fieldErrors,
  formErrorSummary,
  postButton,
  snippet,
  timeTag,
} from '../components.ts';
import { idParam, queryText, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, render, type PageContext } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';
import { chosenIntegrations, deliveryPill, integrationChoices } from '../integration-choices.ts';

const statePill = (t: Pick<Trigger, 'active'>) =>
  t.active ? html`<span class="pill up">Active</span>` : html`<span class="pill">Paused</span>`;
const limitText = (t: Pick<Trigger, 'rate_limit'>) => (t.rate_limit ? `${t.rate_limit.max} per ${t.rate_limit.per}` : 'none');

interface Values {
  name: string;
  message: string;
  protect: boolean;
  max: string;
  per: string;
  integrationIds: string[];
}

const valuesOf = (t?: Trigger): Values => ({
  name: t?.name ?? '',
  message: t?.default_message ?? '',
  protect: t?.token_protected ?? true,
  max: t?.rate_limit ? String(t.rate_limit.max) : '',
  per: t?.rate_limit?.per ?? 'minute',
  integrationIds: t?.integration_ids ?? [],
});

const formValues = (f: Form): Values => ({
  name: text(f, 'name'),
  message: text(f, 'default_message'),
  protect: text(f, 'token_protected') === 'on',
  max: text(f, 'rate_max'),
  per: text(f, 'rate_per'),
  integrationIds: chosenIntegrations(f),
});

function bodyOf(v: Values): Record<string, unknown> {
  return {
    name: v.name,
    default_message: v.message,
    token_protected: v.protect,
    rate_limit: v.max === '' ? null : { max: /^\d+$/.test(v.max) ? Number(v.max) : v.max, per: v.per },
    integration_ids: v.integrationIds,
  };
}

async function triggerForm(
  deps: WebDeps,
  pc: PageContext,
  opts: { action: string; values: Values; errors?: Record<string, string[]>; editing: boolean; cancel: string },
): Promise<Html> {
  const v = opts.values;
  const e = opts.errors;
  const { items: all } = await integrations.listIntegrations(deps.ctx, pc.session.principal, pc.project!.id, { page: 1, per_page: 100 });
  const messageErrors = fieldErrors(e, 'default_message');
  return html`<form method="post" action="${opts.action}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, ['name', 'default_message', 'rate_limit', 'integration_ids'])}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Deploy finished', errors: e })}
    <div class="field${messageErrors.length ? ' invalid' : ''}">
      <label for="f-default_message">Default message</label>
      <textarea id="f-default_message" name="default_message" rows="3" required>${v.message}</textarea>
      <div class="help">Sent when a call carries no message of its own.</div>
      ${messageErrors.map((m) => html`<div class="error">${m}</div>`)}
    </div>
    ${integrationChoices(all, v.integrationIds, 'Send messages to')}
    ${checkbox({ name: 'token_protected', label: 'Require a token', checked: v.protect, help: 'Calls must send it as Authorization: Bearer <token> or ?token=. It is shown once, after saving.' })}
    <div class="form-row">
      ${field({ name: 'rate_max', label: 'Rate limit (optional)', type: 'number', value: v.max, min: 1, errors: e, errorPrefix: 'rate_limit', help: 'Most calls accepted per period; empty accepts every call.' })}
      <div class="field">
        <label for="f-rate_per">Per</label
        ><select id="f-rate_per" name="rate_per">
          ${ratePeriods.map((p) => html`<option value="${p}" ${p === v.per ? html` selected` : ''}>${p}</option>`)}
        </select>
      </div>
    </div>
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create trigger'}</button
      ><a class="btn" href="${opts.cancel}">Cancel</a>
    </div>
  </form>`;
}

function eventsTable(items: readonly TriggerEventView[], now: Date): Html {
  const outcome = {
    dispatched: html`<span class="pill up">Dispatched</span>`,
    paused: html`<span class="pill">Paused</span>`,
    no_integrations: html`<span class="pill late">No integration</span>`,
  };
  return dataTable(
    ['When', 'Message', 'Outcome', 'Deliveries'],
    items.map(
      (ev) =>
        html`<tr>
          <td class="when">
            ${timeTag(ev.fired_at, relativeTime(new Date(ev.fired_at), now))}
            <div class="faint">${ev.source_address ?? ''}</div>
          </td>
          <td>${ev.message.length > 140 ? `${ev.message.slice(0, 139)}…` : ev.message}</td>
          <td>${outcome[ev.outcome]}</td>
          <td>
            ${ev.deliveries.length === 0 ? html`<span class="faint">–</span>` : ev.deliveries.map((d) => html`<div>${deliveryPill(d)} ${d.integration.name}${d.last_error ? html` <span class="error-text">${d.last_error}</span>` : ''}</div>`)}
          </td>
        </tr>`,
    ),
    { empty: 'No calls yet.' },
  );
}

function callExamples(t: Trigger, token: string | undefined): Html {
  const auth = t.token_protected ? ` -H "Authorization: Bearer ${token ?? '<token>'}"` : '';
  return html`<h3>Notify URL</h3>
    ${copyRow(t.url, 'Copy', 'trigger-url')}
    <h3>Call it</h3>
    ${snippet(`curl -fsS${auth} -d "message=Deploy of v1.2.3 finished" ${t.url}`)}`;
}

/** Triggers: inbound notify URLs, their protection and limits, and what each call delivered. */
export function triggerRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  async function detail(req: FastifyRequest, reply: FastifyReply, id: string, token?: string, status = 200) {
    const principal = sessionOf(req).principal;
    const t = await triggers.getTrigger(ctx, principal, id);
    const { items } = await triggers.listEvents(ctx, principal, id, { page: 1, per_page: 25 });
    const now = ctx.now();
    const live = html`<div class="stats">
        <div class="stat">
          <div class="label">Calls</div>
          <div class="value">${t.fire_count}</div>
        </div>
        <div class="stat">
          <div class="label">Last called</div>
          <div class="value text">
            ${timeTag(t.last_fired_at, t.last_fired_at ? relativeTime(new Date(t.last_fired_at), now) : 'never')}
          </div>
        </div>
        <div class="stat">
          <div class="label">Protection</div>
          <div class="value text">${t.token_protected ? html`token <code>${t.token_hint ?? 'none yet'}</code>` : 'open'}</div>
        </div>
        <div class="stat">
          <div class="label">Rate limit</div>
          <div class="value text">${limitText(t)}</div>
        </div>
      </div>
      <div class="card">
        <div class="card-head"><h2>Calls and deliveries</h2></div>
        ${eventsTable(items, now)}
      </div>`;
    if (queryText(req, 'fragment')) return sendHtml(reply, live);
    const pc = await pageContext(req, deps, t.name, 'triggers');
    const csrf = pc.session.csrfToken;
    const base = urls.trigger(id);
    return sendHtml(
      token ? reply.header('cache-control', 'no-store') : reply,
      render(
        pc,
        html`${pageHead(t.name, {
            pill: statePill(t),
            actions: html`<a class="btn" href="${base}/edit">Edit</a>
              ${postButton({ action: `${base}/${t.active ? 'pause' : 'resume'}`, label: t.active ? 'Pause' : 'Resume', csrf })}
              ${t.token_protected ? postButton({ action: `${base}/token`, label: 'New token', csrf, confirm: 'Make a new token? The current one stops working at once.' }) : ''}
              ${postButton({ action: `${base}/delete`, label: 'Delete', csrf, kind: 'danger', confirm: `Delete “${t.name}”? Its URL stops working.` })}`,
          })}
          ${
            token
              ? html`<div class="secret" role="status">
                  <strong>The trigger's token. Copy it now: it is shown only once.</strong>${copyRow(token, 'Copy', 'trigger-token')}
                </div>`
              : ''
          }
          <div class="card">
            <div class="card-body">
              ${callExamples(t, token)}
              <p class="faint">
                GET or POST; the message comes from a form field, a JSON body or the query string, else the default: “${t.default_message}”.
              </p>
            </div>
          </div>
          <div data-live="${base}?fragment=1" data-live-every="5000">${live}</div>`,
      ),
      status,
    );
  }

  app.get(urls.triggers, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Triggers', 'triggers');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const { items } = await triggers.listTriggers(ctx, sessionOf(req).principal, pc.project.id, { page: 1, per_page: 100 });
    const now = ctx.now();
    const newButton = html`<a class="btn btn-primary" href="${urls.triggers}/new">New trigger</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Triggers', { sub: 'Inbound URLs that send a message through your integrations: deploys, scripts, anything that can call a URL.', actions: items.length ? newButton : '' })}
        ${listOrEmpty(
          items.length,
          emptyState('No triggers yet', 'A trigger is a URL you call to send a message through your integrations.', newButton),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Status', 'Trigger', ['Protection', 'hide-sm'], ['Rate limit', 'hide-sm'], ['Calls', 'num'], 'Last called'],
                items.map(
                  (t) =>
                    html`<tr>
                      <td>${statePill(t)}</td>
                      <td class="name"><a href="${urls.trigger(t.id)}">${t.name}</a><span class="url">${t.url}</span></td>
                      <td class="hide-sm">${t.token_protected ? 'token' : 'open'}</td>
                      <td class="hide-sm">${limitText(t)}</td>
                      <td class="num">${t.fire_count}</td>
                      <td class="when">
                        ${timeTag(t.last_fired_at, t.last_fired_at ? relativeTime(new Date(t.last_fired_at), now) : 'never')}
                      </td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}`,
      ),
    );
  });

  const creatingPage = async (pc: PageContext, values: Values, errors?: FieldErrors) =>
    formPage(
      pc,
      pageHead('New trigger'),
      await triggerForm(deps, pc, { action: urls.triggers, values, errors, editing: false, cancel: urls.triggers }),
    );

  /** What the edit page and its post share: the trigger (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest) {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit trigger', 'triggers');
    const t = await triggers.getTrigger(ctx, pc.session.principal, id);
    const action = `${urls.trigger(id)}/edit`;
    const page = async (values: Values, errors?: FieldErrors) =>
      formPage(
        pc,
        pageHead(html`Edit ${t.name}`),
        await triggerForm(deps, pc, { action, values, errors, editing: true, cancel: urls.trigger(id) }),
      );
    return { pc, id, t, page };
  }

  app.get(`${urls.triggers}/new`, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New trigger', 'triggers');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    return sendHtml(reply, await creatingPage(pc, valuesOf()));
  });

  app.post(urls.triggers, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New trigger', 'triggers');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    return submitForm(req, reply, deps, {
      schema: TriggerCreateBody,
      input: (form) => ({ ...bodyOf(formValues(form)), project_id: projectId }),
      show: async (form, errors, status) => sendHtml(reply, await creatingPage(pc, formValues(form), errors), status),
      save: (body) => triggers.createTrigger(ctx, pc.session.principal, body),
      // A new token is shown once, on the trigger's page: rendered, not redirected to.
      done: (created) =>
        created.token
          ? detail(req, reply, created.id, created.token, 201)
          : { flash: `Trigger “${created.name}” created.`, to: urls.trigger(created.id) },
    });
  });

  app.get(`${urls.triggers}/:id`, async (req, reply) => detail(req, reply, idParam(req)));

  app.get(`${urls.triggers}/:id/edit`, async (req, reply) => {
    const { t, page } = await editing(req);
    return sendHtml(reply, await page(valuesOf(t)));
  });

  app.post(`${urls.triggers}/:id/edit`, async (req, reply) => {
    const { pc, id, t, page } = await editing(req);
    const principal = pc.session.principal;
    return submitForm(req, reply, deps, {
      schema: TriggerUpdateBody,
      input: (form) => bodyOf(formValues(form)),
      show: async (form, errors, status) => sendHtml(reply, await page(formValues(form), errors), status),
      save: (body) => triggers.updateTrigger(ctx, principal, id, body),
      done: async (_saved, body) => {
        // Protection turned on for a trigger that never had a token: make one now, shown once.
        if (body.token_protected && !t.token_protected && !t.token_hint) {
          const regenerated = await triggers.regenerateToken(ctx, principal, id);
          return detail(req, reply, id, regenerated.token, 200);
        }
        return { flash: 'Trigger saved.', to: urls.trigger(id) };
      },
    });
  });

  app.post(`${urls.triggers}/:id/token`, async (req, reply) => {
    const id = idParam(req);
    const regenerated = await triggers.regenerateToken(ctx, sessionOf(req).principal, id);
    return detail(req, reply, id, regenerated.token, 200);
  });

  const setActive = (active: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const t = await triggers.updateTrigger(ctx, session.principal, id, { active });
    await setFlash(ctx.sql, session.id, active ? `“${t.name}” resumed.` : `“${t.name}” paused: calls are recorded, nothing is sent.`);
    return reply.redirect(urls.trigger(id), 303);
  };
  app.post(`${urls.triggers}/:id/pause`, setActive(false));
  app.post(`${urls.triggers}/:id/resume`, setActive(true));

  app.post(`${urls.triggers}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const t = await triggers.getTrigger(ctx, session.principal, id);
    await triggers.deleteTrigger(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Trigger “${t.name}” deleted.`);
    return reply.redirect(urls.triggers, 303);
  });
}
