import type { FastifyRequest } from 'fastify';
import { HttpMethod } from '../../../../shared/src/contracts/monitoring.ts';
import type { App } from '../../platform/http/context.ts';
import { MonitorCreateBody, MonitorUpdateBody, defaultValidHttpCodes, type Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { splitUrlCredentials } from '../../monitors/url-credentials.ts';
import type { Integration } from '../../notifications/integrations/schemas.ts';
import type { SubjectRef } from '../../dependencies/rules.ts';
import { chosenDependencies, dependencyField, projectDependencyChoices, type DependencyChoice } from '../dependency-choices.ts';
import { chosenIntegrations, integrationChoices, projectIntegrations } from '../integration-choices.ts';
import { checkbox, csrfInput, field, formErrorSummary, selectField } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, type PageContext } from '../page.ts';
import { urls } from '../urls.ts';

/** "200-299, 301" for [200, ..., 299, 301]: the codes as ranges, the way people write them. */
export function codesText(codes: readonly number[]): string {
  const sorted = [...new Set(codes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/** The inverse of codesText; undefined when the text is not a list of codes and ranges. */
export function parseCodes(input: string): number[] | undefined {
  const codes: number[] = [];
  for (const part of input.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d{3})(?:-(\d{3}))?$/.exec(part);
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = Number(m[2] ?? m[1]);
    if (to < from) return undefined;
    for (let c = from; c <= to; c++) codes.push(c);
  }
  return codes;
}

const intervals: [string, string][] = [
  ['30', 'Every 30 seconds'],
  ['60', 'Every minute'],
  ['120', 'Every 2 minutes'],
  ['300', 'Every 5 minutes'],
  ['600', 'Every 10 minutes'],
  ['1800', 'Every 30 minutes'],
  ['3600', 'Every hour'],
];

interface Values {
  name: string;
  url: string;
  method: string;
  codes: string;
  interval: string;
  timeout: string;
  regions: string;
  quorum: string;
  confirmDown: string;
  confirmUp: string;
  tags: string;
  username: string;
  followRedirects: boolean;
  hasPassword: boolean;
  integrationIds: string[];
  dependsOn: SubjectRef[];
  flapThreshold: string;
  flapWindow: string;
  alertRegional: boolean;
}

function valuesOf(m: Monitor | undefined): Values {
  return {
    name: m?.name ?? '',
    url: m?.url ?? '',
    method: m?.method ?? 'GET',
    codes: codesText(m?.valid_http_codes ?? defaultValidHttpCodes),
    interval: String(m?.interval ?? 60),
    timeout: m ? String(m.timeout) : '',
    regions: m?.regions?.join(', ') ?? '',
    quorum: m?.quorum == null ? '' : String(m.quorum),
    confirmDown: String(m?.confirm_down ?? 1),
    confirmUp: String(m?.confirm_up ?? 1),
    tags: m?.tags.join(', ') ?? '',
    username: m?.basic_auth_username ?? '',
    followRedirects: m?.follow_redirects ?? true,
    hasPassword: false,
    integrationIds: m?.integration_ids ?? [],
    dependsOn: m?.depends_on ?? [],
    flapThreshold: m?.flap_threshold == null ? '' : String(m.flap_threshold),
    flapWindow: String(Math.round((m?.flap_window_seconds ?? 600) / 60)),
    alertRegional: m?.alert_regional ?? false,
  };
}

/** What a form shown again after an error holds: like a password field, a password in the URL is not echoed. */
function formValues(form: Form, hasPassword: boolean): Values {
  const credentials = splitUrlCredentials(text(form, 'url'));
  return {
    name: text(form, 'name'),
    url: credentials?.url ?? text(form, 'url'),
    method: text(form, '_method'),
    codes: text(form, 'valid_http_codes'),
    interval: text(form, 'interval'),
    timeout: text(form, 'timeout'),
    regions: text(form, 'regions'),
    quorum: text(form, 'quorum'),
    confirmDown: text(form, 'confirm_down'),
    confirmUp: text(form, 'confirm_up'),
    tags: text(form, 'tags'),
    username: text(form, 'basic_auth_username') || (credentials?.username ?? ''),
    followRedirects: text(form, 'follow_redirects') === 'on',
    hasPassword,
    integrationIds: chosenIntegrations(form),
    dependsOn: chosenDependencies(form),
    flapThreshold: text(form, 'flap_threshold'),
    flapWindow: text(form, 'flap_window_minutes'),
    alertRegional: text(form, 'alert_regional') === 'on',
  };
}

const known = [
  'integration_ids',
  'name',
  'url',
  '_method',
  'valid_http_codes',
  'interval',
  'timeout',
  'regions',
  'quorum',
  'confirm_down',
  'confirm_up',
  'tags',
  'basic_auth_username',
  'basic_auth_password',
  'depends_on',
  'flap_threshold',
  'flap_window_seconds',
];

function monitorForm(
  pc: PageContext,
  opts: {
    action: string;
    values: Values;
    errors?: Record<string, string[]>;
    editing: boolean;
    integrations: readonly Integration[];
    choices: readonly DependencyChoice[];
    self: string | null;
  },
): Html {
  const v = opts.values;
  const e = opts.errors;
  const intervalOptions =
    intervals.some(([s]) => s === v.interval) || !v.interval
      ? intervals
      : [...intervals, [v.interval, `Every ${v.interval} seconds`] as [string, string]];
  return html`<form method="post" action="${opts.action}" class="form" novalidate>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, known)}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Home page', errors: e, autofocus: !opts.editing })}
    ${field({ name: 'url', label: 'URL', type: 'url', value: v.url, required: true, placeholder: 'https://example.com/health', errors: e })}
    <div class="form-row">
      ${selectField({ name: '_method', label: 'Method', value: v.method, options: HttpMethod.options.map((m) => [m, m] as const), errors: e })}
      ${field({ name: 'valid_http_codes', label: 'Accepted status codes', value: v.codes, errors: e, help: 'Codes and ranges, such as 200-299, 301.' })}
    </div>
    <div class="form-row">
      ${selectField({ name: 'interval', label: 'Check', value: v.interval, options: intervalOptions, errors: e })}
      ${field({ name: 'timeout', label: 'Timeout (seconds)', type: 'number', value: v.timeout, min: 1, max: 60, errors: e, help: 'Default 10, never above the interval.' })}
    </div>
    ${field({ name: 'tags', label: 'Tags', value: v.tags, errors: e, errorPrefix: 'tags', placeholder: 'prod, checkout', help: 'Comma-separated, up to 10: labels to sort and filter the list by.' })}
    ${field({ name: 'regions', label: 'Regions', value: v.regions, errors: e, errorPrefix: 'regions', placeholder: 'All regions', help: 'Comma-separated, such as eu-west, us-east. Empty: every region with a live agent.' })}
    <fieldset>
      <legend>When is it down?</legend>
      <div class="form-row">
        ${field({ name: 'quorum', label: 'Failing regions needed', type: 'number', value: v.quorum, min: 1, max: 50, placeholder: 'Majority', errors: e, help: 'Empty: a majority of the regions voting. Degraded regions abstain.' })}
        ${field({ name: 'confirm_down', label: 'Failing rounds before down', type: 'number', value: v.confirmDown, min: 1, max: 10, errors: e, help: 'Consecutive checks of every region.' })}
        ${field({ name: 'confirm_up', label: 'Passing rounds before up', type: 'number', value: v.confirmUp, min: 1, max: 10, errors: e })}
      </div>
      ${checkbox({ name: 'alert_regional', label: 'Also send regional incidents', checked: v.alertRegional, help: 'Failing in some regions, fewer than needed: the monitor stays up. Always recorded and shown; sent only when ticked.' })}
    </fieldset>
    <fieldset>
      <legend>Fewer, better alerts</legend>
      ${dependencyField(opts.choices, v.dependsOn, opts.self, e)}
      <div class="form-row">
        ${field({ name: 'flap_threshold', label: 'Flapping after (changes)', type: 'number', value: v.flapThreshold, min: 2, max: 100, placeholder: 'Off', errors: e, help: 'More changes than this within the window: one message that it flaps, one when it settles. Empty: off.' })}
        ${field({ name: 'flap_window_minutes', label: 'Flapping window (minutes)', type: 'number', value: v.flapWindow, min: 1, max: 1440, errors: e?.flap_window_seconds ? { flap_window_minutes: e.flap_window_seconds } : e, help: 'Also how long without a change settles it.' })}
      </div>
    </fieldset>
    <fieldset>
      <legend>Basic authentication (optional)</legend>
      <div class="form-row">
        ${field({ name: 'basic_auth_username', label: 'Username', value: v.username, autocomplete: 'off', errors: e })}
        ${field({
          name: 'basic_auth_password',
          label: 'Password',
          type: 'password',
          autocomplete: 'new-password',
          errors: e,
          help: opts.editing ? 'Leave empty to keep the stored password.' : 'Stored encrypted; never shown again.',
        })}
      </div>
      ${opts.editing ? checkbox({ name: 'clear_password', label: 'Remove the stored password', checked: false }) : ''}
    </fieldset>
    ${checkbox({ name: 'follow_redirects', label: 'Follow redirects (up to 5)', checked: v.followRedirects })}
    ${integrationChoices(opts.integrations, v.integrationIds)}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create monitor'}</button>
      <a class="btn" href="${opts.editing ? opts.action.replace(/\/edit$/, '') : urls.monitors}">Cancel</a>
    </div>
  </form>`;
}

/** The form's fields as the REST API's body: the same schema validates both. */
function bodyOf(form: Form, editing: boolean): Record<string, unknown> {
  const regions = text(form, 'regions')
    .split(/[\s,]+/)
    .filter(Boolean);
  const timeout = text(form, 'timeout');
  const password = typeof form.basic_auth_password === 'string' ? form.basic_auth_password : '';
  const body: Record<string, unknown> = {
    name: text(form, 'name'),
    url: text(form, 'url'),
    _method: text(form, '_method') || 'GET',
    valid_http_codes: parseCodes(text(form, 'valid_http_codes')) ?? [],
    interval: Number(text(form, 'interval') || '60'),
    regions: regions.length > 0 ? regions : null,
    basic_auth_username: text(form, 'basic_auth_username') || null,
    follow_redirects: text(form, 'follow_redirects') === 'on',
    integration_ids: chosenIntegrations(form),
    depends_on: chosenDependencies(form),
    alert_regional: text(form, 'alert_regional') === 'on',
    tags: text(form, 'tags')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  };
  if (timeout !== '') body.timeout = /^\d+$/.test(timeout) ? Number(timeout) : timeout;
  // A number field sent as typed: the schema names what is wrong with it.
  const quorum = text(form, 'quorum');
  body.quorum = quorum === '' ? null : /^\d+$/.test(quorum) ? Number(quorum) : quorum;
  for (const name of ['confirm_down', 'confirm_up']) {
    const value = text(form, name);
    if (value !== '') body[name] = /^\d+$/.test(value) ? Number(value) : value;
  }
  const flap = text(form, 'flap_threshold');
  body.flap_threshold = flap === '' ? null : /^\d+$/.test(flap) ? Number(flap) : flap;
  const flapWindow = text(form, 'flap_window_minutes');
  if (flapWindow !== '') body.flap_window_seconds = /^\d+$/.test(flapWindow) ? Number(flapWindow) * 60 : flapWindow;
  if (editing && text(form, 'clear_password') === 'on') body.basic_auth_password = null;
  else if (password) body.basic_auth_password = password;
  return body;
}

/** The status codes as typed: the schema only sees the list they became. */
function codesErrors(form: Form): FieldErrors {
  return parseCodes(text(form, 'valid_http_codes')) ? {} : { valid_http_codes: ['Use codes and ranges such as 200-299, 301.'] };
}

type FormOf = (values: Values, errors?: FieldErrors) => Html;

export function monitorFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  /** What the new-monitor page and its post share: the page and the form for the current project. */
  async function creating(req: FastifyRequest): Promise<{ pc: PageContext; form: FormOf }> {
    const pc = await pageContext(req, deps, 'New monitor', 'monitors');
    const integrations = pc.project ? await projectIntegrations(deps, pc.session.principal, pc.project.id) : [];
    const choices = pc.project ? await projectDependencyChoices(deps, pc.session.principal, pc.project.id) : [];
    const form: FormOf = (values, errors) =>
      monitorForm(pc, { action: urls.monitors, values, errors, editing: false, integrations, choices, self: null });
    return { pc, form };
  }

  /** What the edit page and its post share: the monitor (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest): Promise<{ pc: PageContext; id: string; monitor: Monitor; page: FormOf }> {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit monitor', 'monitors');
    const monitor = await monitors.getMonitor(ctx, pc.session.principal, id);
    const integrations = await projectIntegrations(deps, pc.session.principal, monitor.project_id);
    const choices = await projectDependencyChoices(deps, pc.session.principal, monitor.project_id);
    const action = `${urls.monitor(id)}/edit`;
    const page: FormOf = (values, errors) =>
      formPage(
        pc,
        pageHead(html`Edit ${monitor.name}`),
        monitorForm(pc, { action, values, errors, editing: true, integrations, choices, self: id }),
      );
    return { pc, id, monitor, page };
  }

  app.get(urls.newMonitor, async (req, reply) => {
    const { pc, form } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const head = pageHead('New monitor', { sub: html`In <strong>${pc.project.name}</strong>` });
    return sendHtml(reply, formPage(pc, head, form(valuesOf(undefined))));
  });

  app.post(urls.monitors, async (req, reply) => {
    const { pc, form } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    return submitForm(req, reply, deps, {
      schema: MonitorCreateBody,
      input: (fields) => ({ ...bodyOf(fields, false), project_id: projectId }),
      check: codesErrors,
      show: (fields, errors, status) =>
        sendHtml(reply, formPage(pc, pageHead('New monitor'), form(formValues(fields, false), errors)), status),
      save: (body) => monitors.createMonitor(ctx, pc.session.principal, body),
      done: (monitor) => ({
        flash: `Monitor “${monitor.name}” created. The first check runs within its interval.`,
        to: urls.monitor(monitor.id),
      }),
    });
  });

  app.get(`${urls.monitors}/:id/edit`, async (req, reply) => {
    const { monitor, page } = await editing(req);
    return sendHtml(reply, page(valuesOf(monitor)));
  });

  app.post(`${urls.monitors}/:id/edit`, async (req, reply) => {
    const { pc, id, page } = await editing(req);
    return submitForm(req, reply, deps, {
      schema: MonitorUpdateBody,
      input: (fields) => bodyOf(fields, true),
      check: codesErrors,
      show: (fields, errors, status) => sendHtml(reply, page(formValues(fields, false), errors), status),
      save: (body) => monitors.updateMonitor(ctx, pc.session.principal, id, body),
      done: (updated) => ({ flash: `Monitor “${updated.name}” saved.`, to: urls.monitor(id) }),
    });
  });
}
