import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { StatusPageIncidentCreateBody, type StatusPageIncident } from '../../status-pages/incidents/schemas.ts';
import * as incidents from '../../status-pages/incidents/service.ts';
import { pageShowing } from '../../status-pages/service.ts';
import { checkbox, csrfInput, emptyState, field, formErrorSummary, selectField, textareaField } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { componentChoices, componentRefs, impactOptions, statusOptions } from '../incident-fields.ts';
import { impactPill, statusPill, utcTime } from '../incident-timeline.ts';
import { pageHead } from '../layout.ts';
import { formPage, pageContext, render } from '../page.ts';
import { dataTable, listOrEmpty } from '../table.ts';
import { urls } from '../urls.ts';

/** The incidents of one status page, drafts first marked as such; and the form of a new one. Plain forms: no script needed. */

const PER_PAGE = 100;

/** A draft is marked in words wherever it is listed: it is not on the public page. */
export function publicationMark(i: Pick<StatusPageIncident, 'published'>): Html {
  return i.published
    ? html`<span class="pill up" data-published="true">Published</span>`
    : html`<span class="pill paused draft-mark" data-published="false">Draft</span>`;
}

interface NewValues {
  title: string;
  impact: string;
  status: string;
  message: string;
  components: string[];
  published: boolean;
}

const newValues = (form?: Form): NewValues =>
  form
    ? {
        title: text(form, 'title'),
        impact: text(form, 'impact'),
        status: text(form, 'status'),
        message: text(form, 'message'),
        components: componentRefs(form).map((c) => `${c.type}:${c.id}`),
        published: text(form, 'published') === 'on',
      }
    : { title: '', impact: 'minor', status: 'investigating', message: '', components: [], published: false };

export function statusPageIncidentsRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  async function ofPage(req: FastifyRequest, title: string) {
    const pc = await pageContext(req, deps, title, 'status-pages');
    const showing = await pageShowing(ctx, pc.session.principal, idParam(req));
    return { pc, ...showing };
  }

  app.get(`${urls.statusPages}/:id/incidents`, async (req, reply) => {
    const { pc, view } = await ofPage(req, 'Incidents');
    const { items } = await incidents.listIncidents(ctx, pc.session.principal, view.id, {}, { page: 1, per_page: PER_PAGE });
    const newButton = html`<a class="btn btn-primary" href="${urls.statusPageIncidents(view.id)}/new">New incident</a>`;
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead(html`Incidents of ${view.title}`, {
          sub: html`Drafts are seen here only; published incidents are on
            <a href="${urls.statusPage(view.slug)}" target="_blank" rel="noopener">the public page</a>. Outages of what the page shows are
            drafted on their own${view.auto_publish_incidents ? ' and published at once' : ''}.`,
          actions: html`<a class="btn" href="${urls.statusPageSubscribers(view.id)}">Subscribers</a>
            <a class="btn" href="${urls.statusPageSettings(view.id)}/edit">Edit the page</a> ${newButton}`,
        })}
        ${listOrEmpty(
          items.length,
          emptyState('No incidents yet', 'Write one when something goes wrong, or wait for an outage to draft one.', newButton),
          () =>
            html`<div class="card">
              ${dataTable(
                ['Incident', 'Status', 'Impact', 'Began', ''],
                items.map(
                  (i) =>
                    html`<tr data-incident="${i.id}" data-published="${String(i.published)}">
                      <td class="name">
                        <a href="${urls.statusPageIncident(view.id, i.id)}">${i.title}</a> ${publicationMark(i)}
                        ${i.suggested_update ? html`<div class="faint">The outage ended: a resolved update is suggested</div>` : ''}
                      </td>
                      <td>${statusPill(i.status)}</td>
                      <td>${impactPill(i.impact)}</td>
                      <td>${utcTime(i.created_at)}</td>
                      <td class="nowrap"><a class="btn btn-sm" href="${urls.statusPageIncident(view.id, i.id)}">Open</a></td>
                    </tr>`,
                ),
              )}
            </div>`,
        )}`,
      ),
    );
  });

  const newForm = (
    pc: Awaited<ReturnType<typeof ofPage>>['pc'],
    view: Awaited<ReturnType<typeof ofPage>>['view'],
    shown: Awaited<ReturnType<typeof ofPage>>['shown'],
    v: NewValues,
    e?: FieldErrors,
  ) =>
    formPage(
      pc,
      pageHead('New incident', { sub: html`On <strong>${view.title}</strong>` }),
      html`<form method="post" action="${urls.statusPageIncidents(view.id)}" class="form wide" novalidate>
        ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, ['title', 'impact', 'status', 'message', 'components', 'published'])}
        ${field({ name: 'title', label: 'Title', value: v.title, required: true, errors: e, autofocus: true, placeholder: 'Checkout is failing' })}
        <div class="form-row">
          ${selectField({ name: 'impact', label: 'Impact', value: v.impact, options: impactOptions, errors: e })}
          ${selectField({ name: 'status', label: 'Status', value: v.status, options: statusOptions, errors: e })}
        </div>
        ${textareaField({
          name: 'message',
          label: 'First update',
          value: v.message,
          rows: 4,
          errors: e,
          help: 'Markdown: **bold**, lists, links to http and https addresses. HTML is shown as text.',
        })}
        ${componentChoices(shown, v.components, e)}
        ${checkbox({ name: 'published', label: 'Publish now', checked: v.published, help: 'Unchecked: a draft, seen here only until you publish it.' })}
        <div class="actions">
          <button type="submit" class="btn btn-primary">Create incident</button>
          <a class="btn" href="${urls.statusPageIncidents(view.id)}">Cancel</a>
        </div>
      </form>`,
    );

  app.get(`${urls.statusPages}/:id/incidents/new`, async (req, reply) => {
    const { pc, view, shown } = await ofPage(req, 'New incident');
    return sendHtml(reply, newForm(pc, view, shown, newValues()));
  });

  app.post(`${urls.statusPages}/:id/incidents`, async (req, reply) => {
    const { pc, view, shown } = await ofPage(req, 'New incident');
    return submitForm(req, reply, deps, {
      schema: StatusPageIncidentCreateBody,
      input: (form) => {
        const v = newValues(form);
        return { ...v, components: componentRefs(form) };
      },
      show: (form, errors, status) => sendHtml(reply, newForm(pc, view, shown, newValues(form), errors), status),
      save: (body) => incidents.createIncident(ctx, pc.session.principal, view.id, body),
      done: (i) => ({
        flash: i.published ? `Incident “${i.title}” published.` : `Draft “${i.title}” saved: publish it when it is ready.`,
        to: urls.statusPageIncident(view.id, i.id),
      }),
    });
  });
}
