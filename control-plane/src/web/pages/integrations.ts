import type { FastifyReply, FastifyRequest } from 'fastify';
import { integrationTypes, IntegrationType } from '../../../../shared/src/contracts/notify.ts';
import { addressPolicy } from '../../../../shared/src/net/lookup.ts';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import { IntegrationCreateBody, type Integration } from '../../notifications/integrations/schemas.ts';
import * as integrations from '../../notifications/integrations/service.ts';
import { createHttpClient } from '../../notifications/channels/http.ts';
import { createChannels } from '../../notifications/channels/index.ts';
import type { DeliveryView } from '../../notifications/log.ts';
import { csrfInput, emptyState, field, fieldErrors, formErrorSummary, postButton, timeTag } from '../components.ts';
import { deliveryPill } from '../integration-choices.ts';
import { configFields, readConfig, typeLabels, type ConfigField } from '../config-fields.ts';
import { idParam, queryText, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { submitForm } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, render, type PageContext } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';
import { integrationMessageRoutes, readTemplate, templateFields } from './integration-message.ts';

const acronyms: Record<string, string> = { url: 'URL', smtp: 'SMTP', api: 'API', id: 'ID' };
const label = (name: string) =>
  name
    .split('_')
    .map((w, i) => acronyms[w] ?? (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join(' ');
const helpOf = (f: ConfigField) => {
  const text = (f.help ?? '').replace(/^Write-only[.:]?\s*/, '');
  return f.kind === 'secret' ? `${text}${text ? ' ' : ''}Stored encrypted, never shown again.` : text;
};

function configInput(f: ConfigField, form: Form, errors: Record<string, string[]> | undefined): Html {
  const name = `config.${f.name}`;
  const value = typeof form[name] === 'string' && f.kind !== 'secret' ? (form[name] as string) : '';
  const errs = fieldErrors(errors, name);
  const common = html`id="f-${name}" name="${name}"${f.required ? html` required` : ''}`;
  const input =
    f.kind === 'select'
      ? html`<select ${common}>
          ${f.options.map((o) => html`<option value="${o}" ${o === (value || f.placeholder) ? html` selected` : ''}>${o}</option>`)}
        </select>`
      : f.kind === 'lines'
        ? html`<textarea ${common} rows="3" placeholder="Authorization: Bearer …">${value}</textarea>`
        : html`<input
            ${common}
            type="${f.kind === 'secret' ? 'password' : 'text'}"
            value="${value}"
            placeholder="${f.kind === 'list' ? 'ops@example.com, oncall@example.com' : f.placeholder}"
            autocomplete="off"
          />`;
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-${name}">${label(f.name)}${f.required ? '' : html` <span class="faint">(optional)</span>`}</label>${input}
    ${helpOf(f) ? html`<div class="help">${helpOf(f)}</div>` : ''}${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

function typePicker(): Html {
  return html`<div class="stats">
    ${integrationTypes.map(
      (t) =>
        html`<a class="stat" href="${urls.integrations}/new?type=${t}"
          ><div class="label">Send to</div>
          <div class="value text">${typeLabels[t]}</div></a
        >`,
    )}
  </div>`;
}

function newForm(pc: PageContext, type: IntegrationType, form: Form, errors?: Record<string, string[]>): Html {
  const fields = configFields(type);
  return html`<form method="post" action="${urls.integrations}?type=${type}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(errors, ['name', 'template', ...fields.map((f) => `config.${f.name}`)])}
    ${field({ name: 'name', label: 'Name', value: text(form, 'name') || typeLabels[type], required: true, errors })}
    ${fields.map((f) => configInput(f, form, errors))} ${templateFields(readTemplate(form), errors)}
    <div class="actions">
      <button type="submit" class="btn btn-primary">Create integration</button><a class="btn" href="${urls.integrations}">Cancel</a>
    </div>
  </form>`;
}

function deliveriesTable(items: readonly DeliveryView[], now: Date): Html {
  return dataTable(
    ['When', 'Event', 'Status', ['Message', 'hide-sm'], ['Attempts', 'num']],
    items.map(
      (d) =>
        html`<tr>
          <td class="when">${timeTag(d.created_at, relativeTime(new Date(d.created_at), now))}</td>
          <td>
            <span class="tag">${d.event}</span>
            <div class="faint">${d.subject.name}</div>
          </td>
          <td>${deliveryPill(d)}${d.last_error ? html`<div class="error-text">${d.last_error}</div>` : ''}</td>
          <td class="hide-sm">${d.message.length > 120 ? `${d.message.slice(0, 119)}…` : d.message}</td>
          <td class="num">${d.attempts}</td>
        </tr>`,
    ),
    { empty: 'Nothing sent yet. Use “Send a test” to check the settings.' },
  );
}

function settingsList(i: Integration): Html {
  const entries = Object.entries(i.config).filter(([k]) => !k.endsWith('_hint'));
  return html`<dl class="facts">
    <dt>Type</dt>
    <dd>${typeLabels[i.type]}</dd>
    ${entries.map(([k, v]) => {
      if (k.endsWith('_set')) {
        const name = k.slice(0, -4);
        const hint = i.config[`${name}_hint`];
        return html`<dt>${label(name)}</dt>
          <dd>${v ? html`<code>${typeof hint === 'string' ? hint : 'set'}</code>` : html`<span class="faint">not set</span>`}</dd>`;
      }
      return html`<dt>${label(k)}</dt>
        <dd>${Array.isArray(v) ? v.join(', ') : String(v)}</dd>`;
    })}
    <dt>Message</dt>
    <dd data-testid="template">
      ${
        i.template
          ? html`${i.template.title ? html`<div><code>${i.template.title}</code></div>` : ''}${
              i.template.body ? html`<pre class="template">${i.template.body}</pre>` : ''
            }`
          : html`<span class="faint">the standard wording</span>`
      }
      <div><a href="${urls.integration(i.id)}/message">Edit the message, preview it, send a test</a></div>
    </dd>
  </dl>`;
}

/** Integrations: where alerts go. Created per type, tested with one click, with their delivery log. */
/** Active, paused, or failing (its attempts keep failing: ADR 0032). */
function integrationPill(i: Integration): Html {
  if (!i.active) return html`<span class="pill">Paused</span>`;
  if (i.delivery.failing) return html`<span class="pill down" data-testid="failing">Failing</span>`;
  return html`<span class="pill up">Active</span>`;
}

export function integrationRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  const http = createHttpClient(addressPolicy(ctx.config));
  const channels = createChannels({ http, smtp: { url: ctx.config.SMTP_URL, from: ctx.config.SMTP_FROM }, now: ctx.now });
  app.addHook('onClose', () => http.close());
  integrationMessageRoutes(app, deps, channels);

  app.get(urls.integrations, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Integrations', 'integrations');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const { items } = await integrations.listIntegrations(ctx, sessionOf(req).principal, pc.project.id, { page: 1, per_page: 100 });
    const newButton = html`<a class="btn btn-primary" href="${urls.integrations}/new">New integration</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Integrations', { sub: 'Where alerts and trigger messages are sent. Link them to monitors, heartbeats and triggers.', actions: items.length ? newButton : '' })}
        ${listOrEmpty(
          items.length,
          emptyState(
            'No integrations yet',
            'Send alerts to Slack, Discord, Teams, Telegram, email, PagerDuty, ntfy or any webhook.',
            newButton,
          ),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Status', 'Integration', 'Type', ['Created', 'hide-sm']],
                items.map(
                  (i) =>
                    html`<tr>
                      <td>${integrationPill(i)}</td>
                      <td class="name"><a href="${urls.integration(i.id)}">${i.name}</a></td>
                      <td>${typeLabels[i.type]}</td>
                      <td class="hide-sm">${timeTag(i.created_at, relativeTime(new Date(i.created_at), ctx.now()))}</td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}`,
      ),
    );
  });

  app.get(`${urls.integrations}/new`, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New integration', 'integrations');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const type = IntegrationType.safeParse(queryText(req, 'type'));
    if (type.success)
      return sendHtml(reply, formPage(pc, pageHead(html`New ${typeLabels[type.data]} integration`), newForm(pc, type.data, {})));
    return sendHtml(reply, render(pc, html`${pageHead('New integration', { sub: 'Where should alerts go?' })}${typePicker()}`));
  });

  app.post(urls.integrations, async (req, reply) => {
    const pc = await pageContext(req, deps, 'New integration', 'integrations');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    const type = IntegrationType.parse(queryText(req, 'type'));
    return submitForm(req, reply, deps, {
      schema: IntegrationCreateBody,
      input: (form) => ({
        project_id: projectId,
        name: text(form, 'name'),
        type,
        config: readConfig(type, form),
        template: readTemplate(form),
      }),
      show: (form, errors, status) =>
        sendHtml(reply, formPage(pc, pageHead(html`New ${typeLabels[type]} integration`), newForm(pc, type, form, errors)), status),
      save: (body) => integrations.createIntegration(ctx, pc.session.principal, body),
      done: (created) => ({ flash: `Integration “${created.name}” created. Send a test to check it.`, to: urls.integration(created.id) }),
    });
  });

  app.get(`${urls.integrations}/:id`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const integration = await integrations.getIntegration(ctx, principal, id);
    const { items } = await integrations.listDeliveries(ctx, principal, id, { page: 1, per_page: 30 });
    const log = deliveriesTable(items, ctx.now());
    if (queryText(req, 'fragment')) return sendHtml(reply, log);
    const pc = await pageContext(req, deps, integration.name, 'integrations');
    const csrf = pc.session.csrfToken;
    const base = urls.integration(id);
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(integration.name, {
            pill: integrationPill(integration),
            sub: typeLabels[integration.type],
            actions: html`${postButton({ action: `${base}/test`, label: 'Send a test', csrf, kind: 'primary' })}
            ${postButton({ action: `${base}/${integration.active ? 'pause' : 'resume'}`, label: integration.active ? 'Pause' : 'Resume', csrf })}
            ${postButton({ action: `${base}/delete`, label: 'Delete', csrf, kind: 'danger', confirm: `Delete “${integration.name}”? Monitors, heartbeats and triggers stop sending to it.` })}`,
          })}
          ${
            integration.delivery.failing
              ? html`<p class="notice down" data-testid="integration-failing">
                  Its last ${integration.delivery.failures} attempts failed (since
                  ${(integration.delivery.failing_since ?? '').slice(0, 16).replace('T', ' ')} UTC):
                  ${integration.delivery.last_failure ?? ''}. The project's other integrations were told.
                </p>`
              : ''
          }
          <div class="card">
            <div class="card-head"><h2>Settings</h2></div>
            <div class="card-body">${settingsList(integration)}</div>
          </div>
          <div class="card">
            <div class="card-head"><h2>Delivery log</h2></div>
            <div data-live="${base}?fragment=1" data-live-every="5000">${log}</div>
          </div>`,
      ),
    );
  });

  app.post(`${urls.integrations}/:id/test`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const result = await integrations.testIntegration(ctx, session.principal, id, channels);
    await setFlash(
      ctx.sql,
      session.id,
      result.delivered ? `Test message delivered in ${result.duration_ms} ms.` : `The test failed: ${result.error ?? 'unknown error'}`,
    );
    return reply.redirect(urls.integration(id), 303);
  });

  const setActive = (active: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const i = await integrations.updateIntegration(ctx, session.principal, id, { active });
    await setFlash(ctx.sql, session.id, active ? `“${i.name}” resumed.` : `“${i.name}” paused: nothing is sent to it until you resume it.`);
    return reply.redirect(urls.integration(id), 303);
  };
  app.post(`${urls.integrations}/:id/pause`, setActive(false));
  app.post(`${urls.integrations}/:id/resume`, setActive(true));

  app.post(`${urls.integrations}/:id/delete`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const i = await integrations.getIntegration(ctx, session.principal, id);
    await integrations.deleteIntegration(ctx, session.principal, id);
    await setFlash(ctx.sql, session.id, `Integration “${i.name}” deleted.`);
    return reply.redirect(urls.integrations, 303);
  });
}
