import type { FastifyRequest } from 'fastify';
import { setFlash } from '../../accounts/sessions.ts';
import type { App } from '../../platform/http/context.ts';
import { SubscriberCreateBody, type Subscriber } from '../../status-pages/subscribers/schemas.ts';
import * as subscribers from '../../status-pages/subscribers/service.ts';
import { pageShowing } from '../../status-pages/service.ts';
import { csrfInput, emptyState, field, formErrorSummary, postButton, selectField } from '../components.ts';
import { idParam, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { utcTime } from '../incident-timeline.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render, type PageContext } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

/** The subscribers of one status page: who hears of its incidents and maintenance, and the form to add one. Plain forms: no script needed. */

const PER_PAGE = 100;

interface NewValues {
  type: string;
  email: string;
  url: string;
}

const newValues = (form?: Form): NewValues =>
  form ? { type: text(form, 'type'), email: text(form, 'email'), url: text(form, 'url') } : { type: 'email', email: '', url: '' };

/** The form's fields as the API's body: only the chosen type's, and no empty secret. */
const bodyOf = (form: Form) => {
  const type = text(form, 'type');
  if (type === 'webhook') {
    const secret = text(form, 'secret');
    return { type, url: text(form, 'url').trim(), ...(secret ? { secret } : {}) };
  }
  return { type, email: text(form, 'email') };
};

function state(s: Subscriber): Html {
  if (!s.confirmed) return html`<span class="pill paused" data-confirmed="false">Waiting for confirmation</span>`;
  if (s.failed > 0) return html`<span class="pill down" data-confirmed="true">Failing</span>`;
  return html`<span class="pill up" data-confirmed="true">Active</span>`;
}

export function statusPageSubscribersRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  const base = urls.statusPageSubscribers;

  async function ofPage(req: FastifyRequest, title: string) {
    const pc = await pageContext(req, deps, title, 'status-pages');
    const showing = await pageShowing(ctx, pc.session.principal, idParam(req));
    return { pc, ...showing };
  }

  const list = async (pc: PageContext, view: Awaited<ReturnType<typeof ofPage>>['view'], v: NewValues, e?: FieldErrors) => {
    const { items, total } = await subscribers.listSubscribers(ctx, pc.session.principal, view.id, { page: 1, per_page: PER_PAGE }, {});
    const emailOpen = subscribers.emailSubscriptionsOpen(ctx);
    const csrf = pc.session.csrfToken;
    return render(
      pc,
      html`${pageHead(html`Subscribers of ${view.title}`, {
          sub: html`Each published incident update and each maintenance start and end of what the page shows is sent to every confirmed
          subscriber, once.
          ${
            emailOpen
              ? html`Visitors subscribe by email from
                  <a href="${urls.statusPage(view.slug)}" target="_blank" rel="noopener">the public page</a>.`
              : html`Email subscriptions need an SMTP server (SMTP_URL); webhooks work without one.`
          }`,
          actions: html`<a class="btn" href="${urls.statusPageIncidents(view.id)}">Incidents</a>
            <a class="btn" href="${urls.statusPageSettings(view.id)}/edit">Edit the page</a>`,
        })}
        ${listOrEmpty(
          items.length,
          emptyState('No subscribers yet', 'Add a webhook or an email address below, or share the public page.', html``),
          () =>
            html`<div class="card">
              <div class="card-head">
                <h2>${total} subscriber${total === 1 ? '' : 's'}${total > items.length ? html` (the first ${items.length})` : ''}</h2>
              </div>
              ${dataTable(
                ['Subscriber', 'State', 'Sent', 'Added', ''],
                items.map(
                  (s) =>
                    html`<tr data-subscriber="${s.id}">
                      <td class="name">
                        ${s.type === 'email' ? s.email : html`Webhook to ${s.webhook_host}${s.webhook_secret_set ? ' (signed)' : ''}`}
                        ${s.last_error ? html`<div class="faint">Last error: ${s.last_error}</div>` : ''}
                      </td>
                      <td>${state(s)}</td>
                      <td>${s.delivered}${s.failed > 0 ? html`, ${s.failed} failed` : ''}</td>
                      <td>
                        ${utcTime(s.created_at)}${s.added_by ? html`<div class="faint">by ${s.added_by}</div>` : html`<div class="faint">from the page</div>`}
                      </td>
                      <td class="nowrap">
                        ${postButton({
                          action: `${base(view.id)}/${s.id}/delete`,
                          label: 'Remove',
                          csrf,
                          kind: 'danger',
                          small: true,
                          confirm: `Remove ${s.type === 'email' ? s.email : `the webhook to ${s.webhook_host}`}? Nothing more is sent to it.`,
                        })}
                      </td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}
        <section class="card" aria-labelledby="add-subscriber">
          <div class="card-head"><h2 id="add-subscriber">Add a subscriber</h2></div>
          <div class="card-body">
            <form method="post" action="${base(view.id)}" class="form" novalidate>
              ${csrfInput(csrf)} ${formErrorSummary(e, ['type', 'email', 'url', 'secret'])}
              ${selectField({
                name: 'type',
                label: 'Type',
                value: v.type,
                options: [
                  ['email', 'Email (sent a confirmation first)'],
                  ['webhook', 'Webhook (JSON POST, active at once)'],
                ],
                errors: e,
              })}
              ${field({ name: 'email', label: 'Email address', type: 'email', value: v.email, errors: e, help: 'For an email subscriber.' })}
              ${field({ name: 'url', label: 'Webhook URL', value: v.url, errors: e, placeholder: 'https://example.com/status-hook', help: 'For a webhook; never shown again.' })}
              ${field({ name: 'secret', label: 'Signing secret', type: 'password', value: '', errors: e, help: 'Optional, 16 characters or more: each request is signed (X-Uptime-Signature).' })}
              <div class="actions"><button type="submit" class="btn btn-primary">Add subscriber</button></div>
            </form>
          </div>
        </section>`,
    );
  };

  app.get(`${urls.statusPages}/:id/subscribers`, async (req, reply) => {
    const { pc, view } = await ofPage(req, 'Subscribers');
    return sendHtml(reply, await list(pc, view, newValues()));
  });

  app.post(`${urls.statusPages}/:id/subscribers`, async (req, reply) => {
    const { pc, view } = await ofPage(req, 'Subscribers');
    return submitForm(req, reply, deps, {
      schema: SubscriberCreateBody,
      input: bodyOf,
      show: async (form, errors, status) => sendHtml(reply, await list(pc, view, newValues(form), errors), status),
      save: (body) => subscribers.addSubscriber(ctx, pc.session.principal, view.id, body),
      shown: { CONFLICT: ['email', 'This address is subscribed already, or was asked to confirm already.'] },
      done: (s) => ({
        flash: s.type === 'email' ? `A confirmation email is on its way to ${s.email}.` : `Webhook to ${s.webhook_host} added.`,
        to: base(view.id),
      }),
    });
  });

  app.post(`${urls.statusPages}/:id/subscribers/:subscriber/delete`, async (req, reply) => {
    const session = sessionOf(req);
    const pageId = idParam(req);
    const id = idParam(req, 'subscriber');
    const s = await subscribers.getSubscriber(ctx, session.principal, pageId, id);
    await subscribers.removeSubscriber(ctx, session.principal, pageId, id);
    await setFlash(
      ctx.sql,
      session.id,
      `${s.type === 'email' ? s.email : `The webhook to ${s.webhook_host}`} removed: nothing more is sent to it.`,
    );
    return reply.redirect(base(pageId), 303);
  });
}
