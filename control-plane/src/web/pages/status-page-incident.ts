import type { FastifyReply, FastifyRequest } from 'fastify';
import { setFlash } from '../../accounts/sessions.ts';
import type { App } from '../../platform/http/context.ts';
import { IncidentUpdatePostBody, StatusPageIncidentUpdateBody, type StatusPageIncident } from '../../status-pages/incidents/schemas.ts';
import * as incidents from '../../status-pages/incidents/service.ts';
import { pageShowing } from '../../status-pages/service.ts';
import { checkbox, csrfInput, field, formErrorSummary, postButton, selectField, textareaField } from '../components.ts';
import { idParam, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { componentChoices, componentRefs, impactOptions, statusOptions } from '../incident-fields.ts';
import { impactPill, statusPill, timeline, utcTime } from '../incident-timeline.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render, type PageContext } from '../page.ts';
import { urls } from '../urls.ts';
import { publicationMark } from './status-page-incidents.ts';

/**
 * One incident of a status page in the dashboard: its timeline with a form to post the next
 * update (the suggested one filled in when its outage has ended), publishing, its title, impact
 * and components, and its postmortem. Each part is its own plain form; one that is refused shows
 * the page again with its messages, the other parts as stored.
 */

type Part = 'update' | 'edit' | 'postmortem';

interface Shown {
  part: Part;
  form: Form;
  errors: FieldErrors;
}

interface Loaded {
  pc: PageContext;
  pageId: string;
  incident: StatusPageIncident;
  view: Awaited<ReturnType<typeof pageShowing>>['view'];
  shown: Awaited<ReturnType<typeof pageShowing>>['shown'];
}

const action = (l: Pick<Loaded, 'pageId' | 'incident'>, what: string) => `${urls.statusPageIncident(l.pageId, l.incident.id)}/${what}`;

function updateForm(l: Loaded, s: Shown | undefined): Html {
  const i = l.incident;
  const e = s?.part === 'update' ? s.errors : undefined;
  const form = s?.part === 'update' ? s.form : undefined;
  const suggested = i.suggested_update;
  const status = form ? text(form, 'status') : (suggested?.status ?? (i.status === 'resolved' ? 'resolved' : i.status));
  const message = form ? text(form, 'message') : (suggested?.message ?? '');
  return html`<section class="card" aria-labelledby="post-update">
    <div class="card-head"><h2 id="post-update">Post an update</h2></div>
    <div class="card-body">
      ${
        suggested && i.source?.ended_at
          ? html`<div class="flash" role="status" data-testid="suggestion">
              The outage this incident was drafted from ended ${utcTime(i.source.ended_at)}. The update below is suggested: post it, or
              write your own.
            </div>`
          : ''
      }
      <form method="post" action="${action(l, 'updates')}" class="form wide" novalidate>
        ${csrfInput(l.pc.session.csrfToken)} ${formErrorSummary(e, ['status', 'message'])}
        ${selectField({ name: 'status', label: 'Status', value: status, options: statusOptions, errors: e })}
        ${textareaField({ name: 'message', label: 'Message', value: message, rows: 4, errors: e, help: 'Markdown. HTML is shown as text.' })}
        <div class="actions"><button type="submit" class="btn btn-primary">Post update</button></div>
      </form>
    </div>
  </section>`;
}

function editForm(l: Loaded, s: Shown | undefined): Html {
  const i = l.incident;
  const e = s?.part === 'edit' ? s.errors : undefined;
  const form = s?.part === 'edit' ? s.form : undefined;
  const chosen = form ? componentRefs(form).map((c) => `${c.type}:${c.id}`) : i.components.map((c) => `${c.type}:${c.id}`);
  return html`<section class="card" aria-labelledby="details">
    <div class="card-head"><h2 id="details">Details</h2></div>
    <div class="card-body">
      <form method="post" action="${action(l, 'edit')}" class="form wide" novalidate>
        ${csrfInput(l.pc.session.csrfToken)} ${formErrorSummary(e, ['title', 'impact', 'components'])}
        ${field({ name: 'title', label: 'Title', value: form ? text(form, 'title') : i.title, required: true, errors: e })}
        ${selectField({ name: 'impact', label: 'Impact', value: form ? text(form, 'impact') : i.impact, options: impactOptions, errors: e, help: 'Published and not resolved, it raises the page’s banner.' })}
        ${componentChoices(l.shown, chosen, e)}
        <div class="actions"><button type="submit" class="btn btn-primary">Save details</button></div>
      </form>
    </div>
  </section>`;
}

function postmortemForm(l: Loaded, s: Shown | undefined): Html {
  const i = l.incident;
  const e = s?.part === 'postmortem' ? s.errors : undefined;
  const form = s?.part === 'postmortem' ? s.form : undefined;
  return html`<section class="card" aria-labelledby="postmortem">
    <div class="card-head"><h2 id="postmortem">Postmortem</h2></div>
    <div class="card-body">
      <form method="post" action="${action(l, 'postmortem')}" class="form wide" novalidate>
        ${csrfInput(l.pc.session.csrfToken)} ${formErrorSummary(e, ['postmortem', 'postmortem_published'])}
        ${textareaField({
          name: 'postmortem',
          label: 'What happened, and what changes',
          value: form ? (typeof form['postmortem'] === 'string' ? form['postmortem'] : '') : i.postmortem,
          rows: 12,
          errors: e,
          help: 'Markdown: headings, lists, links. HTML is shown as text.',
        })}
        ${checkbox({
          name: 'postmortem_published',
          label: 'Show it on the public page',
          checked: form ? text(form, 'postmortem_published') === 'on' : i.postmortem_published,
          help: i.published ? 'With the incident, on its own page.' : 'Once the incident is published.',
        })}
        ${e?.['postmortem_published']?.map((m) => html`<div class="error">${m}</div>`) ?? ''}
        <div class="actions"><button type="submit" class="btn btn-primary">Save postmortem</button></div>
      </form>
    </div>
  </section>`;
}

function incidentPage(l: Loaded, s?: Shown): Html {
  const i = l.incident;
  const csrf = l.pc.session.csrfToken;
  const publish = i.published
    ? postButton({
        action: action(l, 'publish'),
        label: 'Unpublish',
        csrf,
        fields: { published: 'off' },
        confirm: 'Take this incident off the public page?',
      })
    : postButton({ action: action(l, 'publish'), label: 'Publish', csrf, kind: 'primary', fields: { published: 'on' } });
  return render(
    l.pc,
    html`${pageHead(i.title, {
        pill: html`${publicationMark(i)} ${statusPill(i.status)}`,
        sub: html`On <a href="${urls.statusPageIncidents(l.pageId)}">${l.view.title}</a> · ${impactPill(i.impact)} · began
          ${utcTime(i.created_at)}${i.resolved_at ? html` · resolved ${utcTime(i.resolved_at)}` : ''}${
            i.published ? html` · <a href="${urls.statusIncident(l.view.slug, i.id)}" target="_blank" rel="noopener">public page</a>` : ''
          }`,
        actions: html`${publish}
        ${postButton({ action: action(l, 'delete'), label: 'Delete', csrf, kind: 'danger', confirm: `Delete the incident “${i.title}”?` })}`,
      })}
      ${i.published ? '' : html`<div class="flash" role="status">A draft: it is not on the public page until you publish it.</div>`}
      ${updateForm(l, s)}
      <section class="card" aria-labelledby="timeline">
        <div class="card-head"><h2 id="timeline">Timeline</h2></div>
        <div class="card-body">${timeline(i.updates, { showBy: true, headingsFrom: 3 })}</div>
      </section>
      ${editForm(l, s)} ${postmortemForm(l, s)}`,
  );
}

export function statusPageIncidentRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;
  const base = `${urls.statusPages}/:id/incidents/:incidentId`;

  async function load(req: FastifyRequest): Promise<Loaded> {
    const pc = await pageContext(req, deps, 'Incident', 'status-pages');
    const pageId = idParam(req);
    const incidentId = idParam(req, 'incidentId');
    const { view, shown } = await pageShowing(ctx, pc.session.principal, pageId);
    const incident = await incidents.getIncident(ctx, pc.session.principal, pageId, incidentId);
    pc.title = incident.title;
    return { pc, pageId, incident, view, shown };
  }

  const again = (reply: FastifyReply, l: Loaded, part: Part) => (form: Form, errors: FieldErrors, status: number) =>
    sendHtml(reply, incidentPage(l, { part, form, errors }), status);
  const back = (l: Loaded) => urls.statusPageIncident(l.pageId, l.incident.id);

  app.get(base, async (req, reply) => sendHtml(reply, incidentPage(await load(req))));

  app.post(`${base}/updates`, async (req, reply) => {
    const l = await load(req);
    return submitForm(req, reply, deps, {
      schema: IncidentUpdatePostBody,
      input: (form) => ({ status: text(form, 'status'), message: text(form, 'message') }),
      show: again(reply, l, 'update'),
      save: (body) => incidents.postIncidentUpdate(ctx, l.pc.session.principal, l.pageId, l.incident.id, body),
      done: (i) => ({ flash: `Update posted: “${i.title}” is ${i.status}.`, to: back(l) }),
    });
  });

  app.post(`${base}/edit`, async (req, reply) => {
    const l = await load(req);
    return submitForm(req, reply, deps, {
      schema: StatusPageIncidentUpdateBody,
      input: (form) => ({ title: text(form, 'title'), impact: text(form, 'impact'), components: componentRefs(form) }),
      show: again(reply, l, 'edit'),
      save: (body) => incidents.updateIncident(ctx, l.pc.session.principal, l.pageId, l.incident.id, body),
      done: () => ({ flash: 'Incident saved.', to: back(l) }),
    });
  });

  app.post(`${base}/postmortem`, async (req, reply) => {
    const l = await load(req);
    return submitForm(req, reply, deps, {
      schema: StatusPageIncidentUpdateBody,
      // Kept as typed: a postmortem's leading spaces and line breaks are Markdown.
      input: (form) => ({
        postmortem: typeof form['postmortem'] === 'string' ? form['postmortem'].replace(/\r\n/g, '\n') : '',
        postmortem_published: text(form, 'postmortem_published') === 'on',
      }),
      show: again(reply, l, 'postmortem'),
      save: (body) => incidents.updateIncident(ctx, l.pc.session.principal, l.pageId, l.incident.id, body),
      done: (i) => ({ flash: i.postmortem_published ? 'Postmortem saved and shown publicly.' : 'Postmortem saved.', to: back(l) }),
    });
  });

  app.post(`${base}/publish`, async (req, reply) => {
    const l = await load(req);
    return submitForm(req, reply, deps, {
      schema: StatusPageIncidentUpdateBody,
      input: (form) => ({ published: text(form, 'published') === 'on' }),
      show: again(reply, l, 'edit'),
      save: (body) => incidents.updateIncident(ctx, l.pc.session.principal, l.pageId, l.incident.id, body),
      done: (i) => ({ flash: i.published ? `“${i.title}” is on the public page.` : `“${i.title}” is a draft again.`, to: back(l) }),
    });
  });

  app.post(`${base}/delete`, async (req, reply) => {
    const l = await load(req);
    await incidents.deleteIncident(ctx, l.pc.session.principal, l.pageId, l.incident.id);
    await setFlash(ctx.sql, sessionOf(req).id, `Incident “${l.incident.title}” deleted.`);
    return reply.redirect(urls.statusPageIncidents(l.pageId), 303);
  });
}
