import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Channels } from '../../notifications/channels/index.ts';
import { PreviewBody, type Integration, type OutboundView } from '../../notifications/integrations/schemas.ts';
import * as integrations from '../../notifications/integrations/service.ts';
import { BODY_MAX, MessageTemplate, templateVariables, TITLE_MAX } from '../../notifications/templates.ts';
import { zodIssuesToErrors } from '../../platform/http/error-handler.ts';
import { validationMessage } from '../../platform/http/validation.ts';
import { AppError } from '../../platform/errors.ts';
import { csrfInput, fieldErrors, formErrorSummary } from '../components.ts';
import { typeLabels } from '../config-fields.ts';
import { formOf, idParam, sendHtml, sessionOf, text, type Form, type WebDeps } from '../context.ts';
import { submitForm } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import type { App } from '../../platform/http/context.ts';
import { urls } from '../urls.ts';

const samples = [
  ['monitor.down', 'A monitor going down (with Acknowledge, Snooze and View)'],
  ['integration.test', 'The test message'],
] as const;
type Sample = (typeof samples)[number][0];

/** The template a form carries (`template.title`, `template.body`); empty parts are left out. */
export function readTemplate(form: Form): { title?: string; body?: string } {
  const title = text(form, 'template.title');
  const body = (() => {
    const v = form['template.body'];
    return (Array.isArray(v) ? (v.at(-1) ?? '') : (v ?? '')).replace(/\r\n/g, '\n').trim();
  })();
  return { ...(title ? { title } : {}), ...(body ? { body } : {}) };
}

const variablesHelp = html`<details class="help variables">
  <summary>Variables</summary>
  <dl class="facts">
    ${Object.entries(templateVariables).map(
      ([name, what]) =>
        html`<dt><code>{{${name}}}</code></dt>
          <dd>${what}</dd>`,
    )}
  </dl>
</details>`;

/**
 * The title and body fields of a message template, with the variables: on the new-integration
 * form and on the message page.
 */
export function templateFields(values: { title?: string; body?: string }, errors: Record<string, string[]> | undefined): Html {
  const titleErrors = fieldErrors(errors, 'template.title');
  const bodyErrors = fieldErrors(errors, 'template.body');
  return html`<fieldset class="template-fields">
    <legend>Message <span class="faint">(optional)</span></legend>
    <div class="help">
      Leave empty for the standard wording. <code>{{variable}}</code> tags are replaced by the alert's values; the buttons and facts stay.
      See docs/messages.md.
    </div>
    <div class="field${titleErrors.length ? ' invalid' : ''}">
      <label for="f-template.title">Title</label>
      <input
        id="f-template.title"
        name="template.title"
        type="text"
        maxlength="${TITLE_MAX}"
        value="${values.title ?? ''}"
        placeholder="{{subject.name}} is {{status}}"
        autocomplete="off"
      />
      ${titleErrors.map((e) => html`<div class="error">${e}</div>`)}
    </div>
    <div class="field${bodyErrors.length ? ' invalid' : ''}">
      <label for="f-template.body">Text</label>
      <textarea
        id="f-template.body"
        name="template.body"
        rows="4"
        maxlength="${BODY_MAX}"
        placeholder="{{cause}} in {{regions}} since {{since}}"
      >
${values.body ?? ''}</textarea>
      ${bodyErrors.map((e) => html`<div class="error">${e}</div>`)}
    </div>
    ${variablesHelp}
  </fieldset>`;
}

const pretty = (body: string) => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
};

/** One request as sent: method and URL, headers, body (pretty, and byte for byte). */
function requestView(r: OutboundView, i: number, of: number): Html {
  const n = of > 1 ? html` <span class="faint">${i + 1} of ${of}</span>` : '';
  if (r.kind === 'email') {
    return html`<div class="payload" data-testid="payload">
      <h3>Email${n}</h3>
      <dl class="facts">
        <dt>SMTP server</dt>
        <dd>
          ${r.smtp_url ? html`<code>${r.smtp_url}</code>` : html`<span class="error-text">none set (SMTP_URL or the integration's smtp_url)</span>`}
        </dd>
        <dt>From</dt>
        <dd>${r.from}</dd>
        <dt>To</dt>
        <dd>${r.to.join(', ')}</dd>
        <dt>Subject</dt>
        <dd data-testid="payload-subject">${r.subject}</dd>
        ${Object.entries(r.headers).map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd><code>${v}</code></dd>`,
        )}
      </dl>
      <h4>Text part</h4>
      <pre data-testid="payload-text">${r.text}</pre>
      <h4>HTML part</h4>
      <pre>${r.html}</pre>
    </div>`;
  }
  return html`<div class="payload" data-testid="payload">
    <h3><code>${r.method} ${r.url}</code>${n}</h3>
    <dl class="facts">
      ${Object.entries(r.headers).map(
        ([k, v]) =>
          html`<dt>${k}</dt>
            <dd><code>${v}</code></dd>`,
      )}
    </dl>
    <pre data-testid="payload-body">${pretty(r.body)}</pre>
    <details>
      <summary>Body byte for byte</summary>
      <pre data-testid="payload-raw">${r.body}</pre>
    </details>
  </div>`;
}

export function payloadCard(title: string, sub: Html | string, requests: readonly OutboundView[], testId: string): Html {
  return html`<div class="card" data-testid="${testId}">
    <div class="card-head"><h2>${title}</h2></div>
    <div class="card-body">
      <p class="faint">${sub}</p>
      ${requests.map((r, i) => requestView(r, i, requests.length))}
    </div>
  </div>`;
}

interface Shown {
  template: { title?: string; body?: string };
  sample: Sample;
  errors?: Record<string, string[]>;
  preview?: readonly OutboundView[];
  sent?: { delivered: boolean; error: string | null; duration_ms: number; requests: readonly OutboundView[] };
}

function messagePage(i: Integration, csrf: string, s: Shown): Html {
  const base = urls.integration(i.id);
  return html`${pageHead(html`Message of ${i.name}`, {
      sub: html`${typeLabels[i.type]} · <a href="${base}">Back to the integration</a>`,
    })}
    <div class="card">
      <div class="card-body">
        <form method="post" action="${base}/message" class="form" novalidate>
          ${csrfInput(csrf)} ${formErrorSummary(s.errors, ['template', 'event'])} ${templateFields(s.template, s.errors)}
          <div class="field">
            <label for="f-event">Sample</label>
            <select id="f-event" name="event">
              ${samples.map(([v, label]) => html`<option value="${v}" ${v === s.sample ? html` selected` : ''}>${label}</option>`)}
            </select>
            <div class="help">What Preview and Send test word. The sample's links lead to no real alert.</div>
          </div>
          <div class="actions">
            <button type="submit" class="btn btn-primary">Save message</button>
            <button type="submit" class="btn" formaction="${base}/message/preview">Preview</button>
            <button type="submit" class="btn" formaction="${base}/message/test">Send test</button>
          </div>
        </form>
      </div>
    </div>
    ${
      s.sent
        ? payloadCard(
            'What was sent',
            s.sent.delivered
              ? html`Delivered in ${s.sent.duration_ms} ms. Secrets are shown as [redacted].`
              : html`<span class="error-text" data-testid="test-error">Not delivered: ${s.sent.error ?? 'unknown error'}</span>`,
            s.sent.requests,
            'sent',
          )
        : ''
    }
    ${
      s.preview
        ? payloadCard(
            'Preview',
            'The exact request(s) this integration sends for the sample, with this message. Secrets are shown as [redacted]; nothing was sent.',
            s.preview,
            'preview',
          )
        : ''
    }`;
}

const sampleOf = (form: Form): Sample => (text(form, 'event') === 'integration.test' ? 'integration.test' : 'monitor.down');

/** The template of a form post, checked with the API's schema; the errors under their fields when it is not valid. */
function parseTemplate(form: Form): { template: MessageTemplate | null } | { errors: Record<string, string[]> } {
  const parsed = z.object({ template: MessageTemplate }).safeParse({ template: readTemplate(form) }, { error: validationMessage });
  if (!parsed.success) return { errors: zodIssuesToErrors(parsed.error.issues) };
  return { template: parsed.data.template };
}

/**
 * An integration's message page: the template form, a preview of the exact request(s) for a
 * sample, a test send showing what was sent. Preview and Send test use the form's template
 * without saving it; every button posts the one form (no script).
 */
export function integrationMessageRoutes(app: App, deps: WebDeps, channels: Channels): void {
  const { ctx } = deps;
  const page = `${urls.integrations}/:id/message`;

  const show = async (req: FastifyRequest, reply: FastifyReply, i: Integration, s: Shown, status = 200) => {
    const pc = await pageContext(req, deps, `Message of ${i.name}`, 'integrations');
    return sendHtml(reply, render(pc, messagePage(i, pc.session.csrfToken, s)), status);
  };

  app.get(page, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const i = await integrations.getIntegration(ctx, principal, id);
    const preview = await integrations.previewIntegration(ctx, principal, id, PreviewBody.parse({}), channels).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'VALIDATION') return undefined;
      throw err;
    });
    return show(req, reply, i, { template: i.template ?? {}, sample: 'monitor.down', ...(preview ? { preview: preview.requests } : {}) });
  });

  app.post(page, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const i = await integrations.getIntegration(ctx, principal, id);
    return submitForm(req, reply, deps, {
      schema: z.object({ template: MessageTemplate }),
      input: (form) => ({ template: readTemplate(form) }),
      show: (form, errors, status) => show(req, reply, i, { template: readTemplate(form), sample: sampleOf(form), errors }, status),
      save: (body) => integrations.updateIntegration(ctx, principal, id, { template: body.template }),
      done: (saved) => ({
        flash: saved.template ? 'Message saved: new alerts use it.' : 'Message cleared: alerts use the standard wording.',
        to: `${urls.integration(id)}/message`,
      }),
    });
  });

  app.post(`${page}/preview`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const i = await integrations.getIntegration(ctx, principal, id);
    const form = formOf(req);
    const t = parseTemplate(form);
    const sample = sampleOf(form);
    if ('errors' in t) return show(req, reply, i, { template: readTemplate(form), sample, errors: t.errors }, 422);
    const preview = await integrations.previewIntegration(ctx, principal, id, { event: sample, template: t.template }, channels);
    return show(req, reply, i, { template: readTemplate(form), sample, preview: preview.requests });
  });

  app.post(`${page}/test`, async (req, reply) => {
    const id = idParam(req);
    const principal = sessionOf(req).principal;
    const i = await integrations.getIntegration(ctx, principal, id);
    const form = formOf(req);
    const t = parseTemplate(form);
    const sample = sampleOf(form);
    if ('errors' in t) return show(req, reply, i, { template: readTemplate(form), sample, errors: t.errors }, 422);
    const result = await integrations.testIntegration(ctx, principal, id, channels, { event: sample, template: t.template });
    return show(req, reply, i, {
      template: readTemplate(form),
      sample,
      sent: { delivered: result.delivered, error: result.error, duration_ms: result.duration_ms, requests: result.sent },
    });
  });
}
