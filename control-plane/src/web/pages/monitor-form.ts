import type { FastifyRequest } from 'fastify';
import { HttpMethod } from '../../../../shared/src/contracts/monitoring.ts';
import type { App } from '../../platform/http/context.ts';
import { MonitorCreateBody, MonitorUpdateBody, defaultValidHttpCodes, type Monitor } from '../../monitors/schemas.ts';
import * as monitors from '../../monitors/service.ts';
import { splitUrlCredentials } from '../../monitors/url-credentials.ts';
import { defaultExpiryDays } from '../../monitors/expiry-warnings.ts';
import type { Integration } from '../../notifications/integrations/schemas.ts';
import type { SubjectRef } from '../../dependencies/rules.ts';
import { chosenDependencies, dependencyField, projectDependencyChoices, type DependencyChoice } from '../dependency-choices.ts';
import { chosenIntegrations, integrationChoices, projectIntegrations } from '../integration-choices.ts';
import { checkbox, csrfInput, field, formErrorSummary, selectField } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import {
  addressField,
  assertionsFieldset,
  checkFieldNames,
  checkFormErrors,
  checkValuesFrom,
  checkValuesOf,
  httpSettingsFields,
  otherTypeFieldsets,
  readCheck,
  typeField,
  typeOf,
  type CheckValues,
} from '../check-fields.ts';
import { testResultPanel } from '../check-details.ts';
import { isTest, regionChoices, runFormTest, testControls, type TestRun } from '../test-now.ts';
import { testDraft, testEdited } from '../../monitors/check-test.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, type PageContext } from '../page.ts';
import { urls } from '../urls.ts';
import { codesText, parseCodes } from '../codes.ts';

// The monitor's page shows the codes the way this form takes them.
export { codesText, parseCodes };

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
  alertDegraded: boolean;
  certificateDays: string;
  domainDays: string;
  check: CheckValues;
  testRegion: string;
}

/** Days as the form shows them: "30, 14, 7, 1"; empty: no warnings. */
const daysText = (days: readonly number[]) => days.join(', ');

/** Days as typed ("30, 14 7"), or null when an entry is not a whole number. */
function parseDays(typed: string): number[] | null {
  const parts = typed.split(/[\s,]+/).filter(Boolean);
  return parts.every((p) => /^\d{1,4}$/.test(p)) ? parts.map(Number) : null;
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
    alertDegraded: m?.alert_degraded ?? false,
    certificateDays: daysText(m?.certificate_expiry_days ?? defaultExpiryDays),
    domainDays: daysText(m?.domain_expiry_days ?? defaultExpiryDays),
    check: checkValuesOf(m),
    testRegion: '',
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
    alertDegraded: text(form, 'alert_degraded') === 'on',
    certificateDays: text(form, 'certificate_expiry_days'),
    domainDays: text(form, 'domain_expiry_days'),
    check: checkValuesFrom(form),
    testRegion: text(form, 'test_region'),
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
  'alert_regional',
  'alert_degraded',
  'certificate_expiry_days',
  'domain_expiry_days',
  ...checkFieldNames,
];

function monitorForm(
  pc: PageContext,
  opts: {
    action: string;
    values: Values;
    errors?: Record<string, string[]> | undefined;
    editing: boolean;
    integrations: readonly Integration[];
    choices: readonly DependencyChoice[];
    self: string | null;
    regions: readonly string[];
  },
): Html {
  const v = opts.values;
  const e = opts.errors;
  const type = typeOf(v.check);
  const intervalOptions =
    intervals.some(([s]) => s === v.interval) || !v.interval
      ? intervals
      : [...intervals, [v.interval, `Every ${v.interval} seconds`] as [string, string]];
  return html`<form method="post" action="${opts.action}" class="form wide" novalidate data-check-form>
    ${csrfInput(pc.session.csrfToken)} ${formErrorSummary(e, known)}
    ${field({ name: 'name', label: 'Name', value: v.name, required: true, placeholder: 'Home page', errors: e, autofocus: !opts.editing })}
    ${typeField(v.check, e)} ${addressField(type, v.url, e)}
    <fieldset class="stack" data-types="http">
      <legend>HTTP request</legend>
      <div class="form-row">
        ${selectField({ name: '_method', label: 'Method', value: v.method, options: HttpMethod.options.map((m) => [m, m] as const), errors: e })}
        ${field({ name: 'valid_http_codes', label: 'Accepted status codes', value: v.codes, errors: e, help: 'Codes and ranges, such as 200-299, 301.' })}
      </div>
      ${httpSettingsFields(v.check, e, opts.editing)}
    </fieldset>
    ${otherTypeFieldsets(v.check, e, opts.editing)} ${assertionsFieldset(v.check, e)}
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
      ${checkbox({ name: 'alert_degraded', label: 'Alert when degraded', checked: v.alertDegraded, help: 'Up, but assertions of severity degraded fail (slow, for example). Always recorded and shown; sent only when ticked.' })}
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
      <legend>Expiry warnings</legend>
      <div class="form-row">
        ${field({ name: 'certificate_expiry_days', label: 'Certificate expires in (days)', value: v.certificateDays, errors: e, errorPrefix: 'certificate_expiry_days', placeholder: 'Off', help: 'A warning at each of these days left on the TLS certificate the checks see, such as 30, 14, 7, 1. Empty: none.' })}
        ${field({ name: 'domain_expiry_days', label: 'Domain registration ends in (days)', value: v.domainDays, errors: e, errorPrefix: 'domain_expiry_days', placeholder: 'Off', help: "Looked up daily (RDAP) for the address's registered domain. Empty: none." })}
      </div>
    </fieldset>
    <fieldset data-types="http">
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
    <div data-types="http multistep">
      ${checkbox({ name: 'follow_redirects', label: 'Follow redirects (up to 5)', checked: v.followRedirects })}
    </div>
    ${integrationChoices(opts.integrations, v.integrationIds)}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${opts.editing ? 'Save changes' : 'Create monitor'}</button>
      <a class="btn" href="${opts.editing ? opts.action.replace(/\/edit$/, '') : urls.monitors}">Cancel</a>
    </div>
    ${testControls(opts.regions, v.testRegion)}
  </form>`;
}

/** The form's fields as the REST API's body: the same schema validates both. Fields of other types are left out. */
function bodyOf(form: Form, editing: boolean): Record<string, unknown> {
  const regions = text(form, 'regions')
    .split(/[\s,]+/)
    .filter(Boolean);
  const timeout = text(form, 'timeout');
  const check = readCheck(form);
  const body: Record<string, unknown> = {
    name: text(form, 'name'),
    url: text(form, 'url'),
    interval: Number(text(form, 'interval') || '60'),
    regions: regions.length > 0 ? regions : null,
    integration_ids: chosenIntegrations(form),
    depends_on: chosenDependencies(form),
    alert_regional: text(form, 'alert_regional') === 'on',
    alert_degraded: text(form, 'alert_degraded') === 'on',
    tags: text(form, 'tags')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    ...check.body,
  };
  if (check.type === 'http') Object.assign(body, httpFields(form, editing));
  if (check.type === 'http' || check.type === 'multistep') body.follow_redirects = text(form, 'follow_redirects') === 'on';
  if (timeout !== '') body.timeout = /^\d+$/.test(timeout) ? Number(timeout) : timeout;
  // A number field sent as typed: the schema names what is wrong with it.
  const quorum = text(form, 'quorum');
  body.quorum = quorum === '' ? null : /^\d+$/.test(quorum) ? Number(quorum) : quorum;
  for (const name of ['confirm_down', 'confirm_up']) {
    const value = text(form, name);
    if (value !== '') body[name] = /^\d+$/.test(value) ? Number(value) : value;
  }
  for (const name of ['certificate_expiry_days', 'domain_expiry_days']) {
    if (form[name] !== undefined) body[name] = parseDays(text(form, name)) ?? [];
  }
  const flap = text(form, 'flap_threshold');
  body.flap_threshold = flap === '' ? null : /^\d+$/.test(flap) ? Number(flap) : flap;
  const flapWindow = text(form, 'flap_window_minutes');
  if (flapWindow !== '') body.flap_window_seconds = /^\d+$/.test(flapWindow) ? Number(flapWindow) * 60 : flapWindow;
  return body;
}

/** The fields only an HTTP check has: method, accepted codes, basic auth. */
function httpFields(form: Form, editing: boolean): Record<string, unknown> {
  const password = typeof form.basic_auth_password === 'string' ? form.basic_auth_password : '';
  const body: Record<string, unknown> = {
    _method: text(form, '_method') || 'GET',
    valid_http_codes: parseCodes(text(form, 'valid_http_codes')) ?? [],
    basic_auth_username: text(form, 'basic_auth_username') || null,
  };
  if (editing && text(form, 'clear_password') === 'on') body.basic_auth_password = null;
  else if (password) body.basic_auth_password = password;
  return body;
}

/** What the form finds wrong itself: the status codes as typed (the schema only sees the list they became), lines it cannot read. */
function ownErrors(form: Form): FieldErrors {
  const check = readCheck(form);
  const errors: FieldErrors = { ...check.problems };
  if (check.type === 'http' && !parseCodes(text(form, 'valid_http_codes'))) {
    errors.valid_http_codes = ['Use codes and ranges such as 200-299, 301.'];
  }
  for (const name of ['certificate_expiry_days', 'domain_expiry_days']) {
    if (parseDays(text(form, name)) === null) errors[name] = ['Use whole numbers of days, such as 30, 14, 7, 1; empty for no warnings.'];
  }
  return errors;
}

type FormOf = (values: Values, errors?: FieldErrors, panel?: Html) => Html;

export function monitorFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  /** What the new-monitor page and its post share: the page and the form for the current project. */
  async function creating(req: FastifyRequest): Promise<{ pc: PageContext; page: FormOf }> {
    const pc = await pageContext(req, deps, 'New monitor', 'monitors');
    const integrations = pc.project ? await projectIntegrations(deps, pc.session.principal, pc.project.id) : [];
    const choices = pc.project ? await projectDependencyChoices(deps, pc.session.principal, pc.project.id) : [];
    const regions = await regionChoices(ctx);
    const sub = pc.project ? html`In <strong>${pc.project.name}</strong>` : '';
    const page: FormOf = (values, errors, panel) =>
      formPage(
        pc,
        html`${pageHead('New monitor', { sub })}${panel ?? ''}`,
        monitorForm(pc, { action: urls.monitors, values, errors, editing: false, integrations, choices, self: null, regions }),
      );
    return { pc, page };
  }

  /** What the edit page and its post share: the monitor (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest): Promise<{ pc: PageContext; id: string; monitor: Monitor; page: FormOf }> {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit monitor', 'monitors');
    const monitor = await monitors.getMonitor(ctx, pc.session.principal, id);
    const integrations = await projectIntegrations(deps, pc.session.principal, monitor.project_id);
    const choices = await projectDependencyChoices(deps, pc.session.principal, monitor.project_id);
    const regions = await regionChoices(ctx);
    const action = `${urls.monitor(id)}/edit`;
    const page: FormOf = (values, errors, panel) =>
      formPage(
        pc,
        html`${pageHead(html`Edit ${monitor.name}`)}${panel ?? ''}`,
        monitorForm(pc, { action, values, errors, editing: true, integrations, choices, self: id, regions }),
      );
    return { pc, id, monitor, page };
  }

  /** The form again with what was typed, the API's field errors under the form's fields, and a test's result above it. */
  const again = (page: FormOf) => (fields: Form, errors: FieldErrors | undefined, panel?: Html) =>
    page(formValues(fields, false), errors && checkFormErrors(errors, readCheck(fields)), panel);

  app.get(urls.newMonitor, async (req, reply) => {
    const { pc, page } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    return sendHtml(reply, page(valuesOf(undefined)));
  });

  app.post(urls.monitors, async (req, reply) => {
    const { pc, page } = await creating(req);
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const projectId = pc.project.id;
    const principal = pc.session.principal;
    const input = (fields: Form) => ({ ...bodyOf(fields, false), project_id: projectId });
    const show = again(page);
    if (isTest(req)) {
      const run: TestRun<typeof MonitorCreateBody> = {
        schema: MonitorCreateBody,
        input,
        check: ownErrors,
        test: (body, region) => testDraft(ctx, principal, { ...body, ...(region ? { region } : {}) }),
      };
      return runFormTest(req, reply, run, (fields, errors, status, outcome) =>
        sendHtml(reply, show(fields, errors, testResultPanel(outcome)), status),
      );
    }
    return submitForm(req, reply, deps, {
      schema: MonitorCreateBody,
      input,
      check: ownErrors,
      show: (fields, errors, status) => sendHtml(reply, show(fields, errors), status),
      save: (body) => monitors.createMonitor(ctx, principal, body),
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
    const principal = pc.session.principal;
    const input = (fields: Form) => bodyOf(fields, true);
    const show = again(page);
    if (isTest(req)) {
      const run: TestRun<typeof MonitorUpdateBody> = {
        schema: MonitorUpdateBody,
        input,
        check: ownErrors,
        test: (changes, region) => testEdited(ctx, principal, id, changes, region),
      };
      return runFormTest(req, reply, run, (fields, errors, status, outcome) =>
        sendHtml(reply, show(fields, errors, testResultPanel(outcome)), status),
      );
    }
    return submitForm(req, reply, deps, {
      schema: MonitorUpdateBody,
      input,
      check: ownErrors,
      show: (fields, errors, status) => sendHtml(reply, show(fields, errors), status),
      save: (body) => monitors.updateMonitor(ctx, principal, id, body),
      done: (updated) => ({ flash: `Monitor “${updated.name}” saved.`, to: urls.monitor(id) }),
    });
  });
}
