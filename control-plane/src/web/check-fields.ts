import {
  assertionOperators,
  assertionSources,
  dnsRecordTypes,
  monitorTypes,
  MAX_ASSERTIONS,
  sourcesOf,
  StepSettings,
  type AssertionInput,
  type AssertionOperator,
  type AssertionSource,
  type HeaderEntry,
  type MonitorType,
} from '../../../shared/src/contracts/checks.ts';
import type { Monitor } from '../monitors/schemas.ts';
import { codesText, parseCodes } from './codes.ts';
import {
  assertionLinesText,
  extractionsText,
  headerLinesText,
  isOperator,
  isSource,
  parseAssertionLines,
  parseExtractions,
  parseHeaderLines,
  parseTarget,
  targetText,
} from './check-form-text.ts';
import { checkbox, field, fieldErrors, selectField, textareaField } from './components.ts';
import { text, type Form } from './context.ts';
import type { FieldErrors } from './form.ts';
import { html, type Html } from './html.ts';

/**
 * The monitor form's check fields (ADR 0034): the type, each type's settings and the assertions.
 * Every type's fieldset is on the page (app.js hides those of the other types) and the server reads
 * the settings of the type chosen, so the form works without JavaScript. Lists have a fixed number
 * of rows; empty rows are left out, and `rows` remembers which row each item the API sees came
 * from, so an API error (`settings.headers.1.value`, `assertions.0.path`) lands under its field.
 */

export interface HeaderRow {
  name: string;
  value: string;
  /** A stored value the form never shows: an empty value keeps it. */
  kept: boolean;
}

export interface AssertionRow {
  source: string;
  path: string;
  operator: string;
  target: string;
  severity: string;
}

export interface StepRow {
  name: string;
  method: string;
  url: string;
  headers: string;
  body: string;
  clearBody: boolean;
  codes: string;
  extract: string;
  assertions: string;
  timeout: string;
}

export interface CheckValues {
  type: string;
  http: { headers: HeaderRow[]; body: string; clearBody: boolean };
  tcp: { tls: boolean; send: string; expect: string };
  dns: { recordType: string; resolver: string; resolverPort: string };
  icmp: { count: string };
  websocket: { headers: HeaderRow[]; send: string; expect: string };
  grpc: { service: string; metadata: HeaderRow[] };
  multistep: { steps: StepRow[] };
  assertions: AssertionRow[];
}

const MAX_HEADERS = 20;
const MAX_STEPS = 10;
const stepMethods = StepSettings.shape.method.unwrap().options;

const typeNames: Record<MonitorType, string> = {
  http: 'HTTP(S)',
  tcp: 'TCP port',
  dns: 'DNS record',
  icmp: 'Ping (ICMP)',
  websocket: 'WebSocket',
  grpc: 'gRPC health',
  multistep: 'Multi-step API',
};

/** A monitor's type as its page shows it: `HTTP GET`, `TCP port`. */
export function typeLabel(m: Pick<Monitor, 'type' | 'method'>): string {
  return m.type === 'http' ? `HTTP ${m.method}` : typeNames[m.type];
}

/** How the URL field reads for each type: its label, an example, and what it is. */
const addressOf: Record<MonitorType, { label: string; placeholder: string; help: string }> = {
  http: { label: 'URL', placeholder: 'https://example.com/health', help: 'The page or endpoint requested.' },
  tcp: { label: 'Address', placeholder: 'tcp://db.example.com:5432', help: 'tcp://host:port' },
  dns: { label: 'Name to look up', placeholder: 'dns://example.com', help: 'dns:// and the name.' },
  icmp: { label: 'Host', placeholder: 'icmp://example.com', help: 'icmp:// and a host name or address.' },
  websocket: { label: 'URL', placeholder: 'wss://example.com/socket', help: 'ws:// or wss://' },
  grpc: { label: 'Address', placeholder: 'grpcs://api.example.com:443', help: 'grpc://host:port, or grpcs:// for TLS.' },
  multistep: {
    label: 'Address shown',
    placeholder: 'https://api.example.com',
    help: "An http(s) URL shown as the monitor's address; the steps say what is requested.",
  },
};

const isType = (value: string): value is MonitorType => (monitorTypes as readonly string[]).includes(value);

/** The type a form's values are for (HTTP for anything else: the API then names what is wrong). */
export function typeOf(values: { type: string }): MonitorType {
  return isType(values.type) ? values.type : 'http';
}

// ---------------------------------------------------------------------------------------------
// Values: from a stored monitor, and from a form posted

function headerRows(list: unknown): HeaderRow[] {
  return ((Array.isArray(list) ? list : []) as HeaderEntry[]).map((h) => ({
    name: h.name,
    value: h.value ?? '',
    kept: h.value === null,
  }));
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown, fallback: number): string => String(typeof v === 'number' ? v : fallback);

function assertionRow(a: AssertionInput): AssertionRow {
  return { source: a.source, path: a.path ?? '', operator: a.operator, target: targetText(a.target), severity: a.severity ?? 'down' };
}

function stepRow(step: Partial<StepSettings>): StepRow {
  return {
    name: step.name ?? '',
    method: step.method ?? 'GET',
    url: step.url ?? '',
    headers: headerLinesText(step.headers ?? []),
    body: step.body ?? '',
    clearBody: false,
    codes: step.valid_http_codes ? codesText(step.valid_http_codes) : '',
    extract: extractionsText(step.extract ?? []),
    assertions: assertionLinesText(step.assertions ?? []),
    timeout: step.timeout === undefined ? '' : String(step.timeout),
  };
}

/** What the form shows for a stored monitor (secrets as kept, never shown), or for a new one. */
export function checkValuesOf(m: Monitor | undefined): CheckValues {
  const type = m?.type ?? 'http';
  const s = (of: MonitorType): Record<string, unknown> => (m && type === of ? m.settings : {});
  return {
    type,
    http: { headers: headerRows(s('http')['headers']), body: '', clearBody: false },
    tcp: { tls: s('tcp')['tls'] === true, send: str(s('tcp')['send']), expect: str(s('tcp')['expect']) },
    dns: {
      recordType: str(s('dns')['record_type']) || 'A',
      resolver: str(s('dns')['resolver']),
      resolverPort: num(s('dns')['resolver_port'], 53),
    },
    icmp: { count: num(s('icmp')['count'], 3) },
    websocket: { headers: headerRows(s('websocket')['headers']), send: str(s('websocket')['send']), expect: str(s('websocket')['expect']) },
    grpc: { service: str(s('grpc')['service']), metadata: headerRows(s('grpc')['metadata']) },
    multistep: { steps: ((s('multistep')['steps'] ?? []) as Partial<StepSettings>[]).map(stepRow) },
    assertions: (m?.assertions ?? []).map(assertionRow),
  };
}

/** A field's value exactly as sent (bodies and texts to send keep their spaces and line breaks). */
function exact(form: Form, name: string): string {
  const v = form[name];
  return Array.isArray(v) ? (v.at(-1) ?? '') : (v ?? '');
}

const present = (form: Form, name: string): boolean => form[name] !== undefined;

/** The rows of a list the form has (up to `max`), by their fields' names `<prefix>.<n>.<key>`. */
export function rowsOf<T>(
  form: Form,
  prefix: string,
  key: string,
  max: number,
  read: (at: (field: string) => string, row: number) => T,
): T[] {
  const rows: T[] = [];
  for (let i = 0; i < max; i++) {
    if (present(form, `${prefix}.${i}.${key}`)) rows.push(read((field) => exact(form, `${prefix}.${i}.${field}`), i));
  }
  return rows;
}

function formHeaderRows(form: Form, prefix: string): HeaderRow[] {
  return rowsOf(form, prefix, 'name', MAX_HEADERS, (at) => ({ name: at('name').trim(), value: at('value'), kept: at('kept') === '1' }));
}

/** What the form holds, shown again after an error or a test: every type's fields, as typed. */
export function checkValuesFrom(form: Form): CheckValues {
  return {
    type: text(form, 'type') || 'http',
    http: {
      headers: formHeaderRows(form, 'http.headers'),
      body: exact(form, 'http.body'),
      clearBody: text(form, 'http.body_clear') === 'on',
    },
    tcp: { tls: text(form, 'tcp.tls') === 'on', send: exact(form, 'tcp.send'), expect: exact(form, 'tcp.expect') },
    dns: { recordType: text(form, 'dns.record_type'), resolver: text(form, 'dns.resolver'), resolverPort: text(form, 'dns.resolver_port') },
    icmp: { count: text(form, 'icmp.count') },
    websocket: {
      headers: formHeaderRows(form, 'websocket.headers'),
      send: exact(form, 'websocket.send'),
      expect: exact(form, 'websocket.expect'),
    },
    grpc: { service: text(form, 'grpc.service'), metadata: formHeaderRows(form, 'grpc.metadata') },
    multistep: {
      steps: rowsOf(form, 'multistep.steps', 'url', MAX_STEPS, (at) => ({
        name: at('name').trim(),
        method: at('method').trim(),
        url: at('url').trim(),
        headers: at('headers'),
        body: at('body'),
        clearBody: at('body_clear') === 'on',
        codes: at('valid_http_codes').trim(),
        extract: at('extract'),
        assertions: at('assertions'),
        timeout: at('timeout').trim(),
      })),
    },
    assertions: rowsOf(form, 'assertion', 'source', MAX_ASSERTIONS, (at) => ({
      source: at('source').trim(),
      path: at('path').trim(),
      operator: at('operator').trim(),
      target: at('target'),
      severity: at('severity').trim(),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Reading: the form's values as the API's type, settings and assertions

const headerEmpty = (h: HeaderRow): boolean => h.name === '' && h.value === '' && !h.kept;
const assertionEmpty = (a: AssertionRow): boolean => a.source === '' && a.path === '' && a.target.trim() === '';
const stepEmpty = (s: StepRow): boolean =>
  [s.name, s.url, s.headers, s.body, s.codes, s.extract, s.assertions, s.timeout].every((v) => v.trim() === '') && !s.clearBody;

/** Where each item the API sees came from on the form: its row, and for a step's lines, its line. */
export interface CheckRows {
  headers: number[];
  assertions: number[];
  steps: { row: number; lines: Record<'headers' | 'extract' | 'assertions', number[]> }[];
}

export interface CheckRead {
  type: MonitorType;
  /** The fields of the API's body. */
  body: { type: string; settings: Record<string, unknown>; assertions: AssertionInput[] };
  /** What the form finds wrong itself (a line it cannot read), by the form's field names. */
  problems: FieldErrors;
  rows: CheckRows;
}

const orNull = (value: string): string | null => (value === '' ? null : value);

/** A number field sent as typed when it is not one: the schema names what is wrong with it. */
const numberOr = (value: string): number | string => (/^\d+$/.test(value) ? Number(value) : value);

/** Rows with a name or a value; an empty value of a kept row is null, which keeps the stored one. */
function readHeaders(rows: readonly HeaderRow[], used: number[]): HeaderEntry[] {
  const out: HeaderEntry[] = [];
  rows.forEach((h, i) => {
    if (h.name === '' && h.value === '') return;
    out.push({ name: h.name, value: h.kept && h.value === '' ? null : h.value });
    used.push(i);
  });
  return out;
}

/** A body: typed, removed (`""`), or left empty (null: none, or on an edit the stored one). */
const readBody = (body: string, clear: boolean): string | null => (clear ? '' : orNull(body));

function addProblem(problems: FieldErrors, field: string, messages: readonly string[]): void {
  if (messages.length > 0) (problems[field] ??= []).push(...messages);
}

function readSteps(steps: readonly StepRow[], rows: CheckRows, problems: FieldErrors): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  steps.forEach((s, i) => {
    if (stepEmpty(s)) return;
    const prefix = `multistep.steps.${i}`;
    const headers = parseHeaderLines(s.headers);
    const extract = parseExtractions(s.extract);
    const assertions = parseAssertionLines(s.assertions);
    addProblem(problems, `${prefix}.headers`, headers.problems);
    addProblem(problems, `${prefix}.extract`, extract.problems);
    addProblem(problems, `${prefix}.assertions`, assertions.problems);
    const codes = s.codes === '' ? undefined : parseCodes(s.codes);
    if (codes === undefined && s.codes !== '')
      addProblem(problems, `${prefix}.valid_http_codes`, ['Use codes and ranges such as 200-299, 301.']);
    out.push({
      name: s.name,
      url: s.url,
      method: s.method || 'GET',
      headers: headers.items,
      body: readBody(s.body, s.clearBody),
      ...(codes ? { valid_http_codes: codes } : {}),
      extract: extract.items,
      assertions: assertions.items,
      ...(s.timeout !== '' ? { timeout: numberOr(s.timeout) } : {}),
    });
    rows.steps.push({ row: i, lines: { headers: headers.lines, extract: extract.lines, assertions: assertions.lines } });
  });
  if (out.length === 0) problems['multistep.steps.0.url'] = ['A multi-step check needs at least one step: fill in step 1.'];
  return out;
}

function readAssertions(list: readonly AssertionRow[], rows: CheckRows, problems: FieldErrors): AssertionInput[] {
  const out: AssertionInput[] = [];
  list.forEach((a, i) => {
    if (assertionEmpty(a)) return;
    if (a.source === '') {
      problems[`assertion.${i}.source`] = ['Choose what the assertion reads.'];
      return;
    }
    const parsed = isSource(a.source) && isOperator(a.operator) ? parseTarget(a.target, a.source, a.operator) : { target: a.target.trim() };
    if (parsed.problem) problems[`assertion.${i}.target`] = [parsed.problem];
    out.push({
      source: a.source as AssertionSource,
      ...(a.path !== '' ? { path: a.path } : {}),
      operator: a.operator as AssertionOperator,
      ...(parsed.target !== undefined && parsed.target !== '' ? { target: parsed.target } : {}),
      severity: a.severity === 'degraded' ? 'degraded' : 'down',
    });
    rows.assertions.push(i);
  });
  return out;
}

/** The type chosen, its settings and the assertions, as the API takes them. */
export function readCheck(form: Form): CheckRead {
  const v = checkValuesFrom(form);
  const type = typeOf(v);
  const rows: CheckRows = { headers: [], assertions: [], steps: [] };
  const problems: FieldErrors = {};
  const settingsOf: Record<MonitorType, () => Record<string, unknown>> = {
    http: () => ({ headers: readHeaders(v.http.headers, rows.headers), body: readBody(v.http.body, v.http.clearBody) }),
    tcp: () => ({ tls: v.tcp.tls, send: orNull(v.tcp.send), expect: orNull(v.tcp.expect) }),
    dns: () => ({
      record_type: v.dns.recordType || 'A',
      resolver: orNull(v.dns.resolver),
      ...(v.dns.resolverPort !== '' ? { resolver_port: numberOr(v.dns.resolverPort) } : {}),
    }),
    icmp: () => (v.icmp.count !== '' ? { count: numberOr(v.icmp.count) } : {}),
    websocket: () => ({
      headers: readHeaders(v.websocket.headers, rows.headers),
      send: orNull(v.websocket.send),
      expect: orNull(v.websocket.expect),
    }),
    grpc: () => ({ service: v.grpc.service, metadata: readHeaders(v.grpc.metadata, rows.headers) }),
    multistep: () => ({ steps: readSteps(v.multistep.steps, rows, problems) }),
  };
  const settings = settingsOf[type]();
  const assertions = readAssertions(v.assertions, rows, problems);
  return { type, body: { type: v.type, settings, assertions }, problems, rows };
}

/**
 * The API's field errors under the form's fields: `settings.<x>` is under the chosen type's
 * `<type>.<x>`, an item of a list under the row it came from, and an item of a step's lines under
 * the step's text field, with its line named.
 */
export function checkFormErrors(errors: FieldErrors, read: CheckRead): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, messages] of Object.entries(errors)) {
    const place = formPlace(key.split('.'), read);
    addProblem(out, place.field, place.line ? messages.map((m) => `Line ${place.line}: ${m}`) : messages);
  }
  return out;
}

function formPlace(parts: string[], read: CheckRead): { field: string; line?: number } {
  const [head, list, index, ...rest] = parts;
  const at = (rows: readonly number[], i: string | undefined) => rows[Number(i)] ?? i;
  if (head === 'assertions' && list !== undefined)
    return { field: ['assertion', at(read.rows.assertions, list), index, ...rest].filter(isPart).join('.') };
  if (head !== 'settings' || list === undefined) return { field: parts.join('.') };
  if ((list === 'headers' || list === 'metadata') && index !== undefined) {
    return { field: [read.type, list, at(read.rows.headers, index), ...rest].join('.') };
  }
  const step = list === 'steps' && index !== undefined ? read.rows.steps[Number(index)] : undefined;
  if (step) {
    const [key, item] = rest;
    const prefix = `multistep.steps.${step.row}`;
    if ((key === 'headers' || key === 'extract' || key === 'assertions') && item !== undefined) {
      const line = step.lines[key][Number(item)];
      return { field: `${prefix}.${key}`, ...(line !== undefined ? { line } : {}) };
    }
    return { field: [prefix, ...rest].join('.') };
  }
  return { field: [read.type, ...parts.slice(1)].join('.') };
}

const isPart = (part: string | number | undefined): part is string | number => part !== undefined;

/** The form's own names of the check fields, for the summary above the form (others are listed there). */
export const checkFieldNames: readonly string[] = ['type', 'assertion', ...monitorTypes];

// ---------------------------------------------------------------------------------------------
// Rendering

/** Rows to show: at least `min`, and room after the last filled one (empty rows posted back do not add up). */
export function rowCount<T>(rows: readonly T[], empty: (row: T) => boolean, min: number, max: number): number {
  const filled = rows.findLastIndex((row) => !empty(row)) + 1;
  return Math.min(max, Math.max(min, filled + 1));
}

export function typeField(values: CheckValues, errors: FieldErrors | undefined): Html {
  return selectField({
    name: 'type',
    label: 'Type',
    value: values.type,
    options: monitorTypes.map((t) => [t, typeNames[t]] as const),
    errors,
    help: 'What is checked. The fields below follow the type.',
  });
}

/** The URL field, labelled for the type; app.js relabels it when the type changes. */
export function addressField(type: MonitorType, url: string, errors: FieldErrors | undefined): Html {
  const data: Record<string, string> = { 'address-by-type': '' };
  for (const t of monitorTypes) {
    data[`label-${t}`] = addressOf[t].label;
    data[`placeholder-${t}`] = addressOf[t].placeholder;
    data[`help-${t}`] = addressOf[t].help;
  }
  return field({
    name: 'url',
    label: addressOf[type].label,
    type: 'url',
    value: url,
    required: true,
    placeholder: addressOf[type].placeholder,
    errors,
    data,
    help: html`<span data-help-by-type>${addressOf[type].help}</span>`,
  });
}

/** A list of header (or metadata) rows: a name and a value each; a stored value is kept unless a new one is typed. */
function headerRowsField(prefix: string, legend: string, rows: readonly HeaderRow[], errors: FieldErrors | undefined): Html {
  const count = rowCount(rows, headerEmpty, 3, MAX_HEADERS);
  const shown = Array.from({ length: count }, (_, i) => rows[i] ?? { name: '', value: '', kept: false });
  return html`<div class="rows" data-testid="${prefix}" data-rows="Add a ${legend.toLowerCase()}">
    <div class="rows-head pair-row" aria-hidden="true"><span>${legend} name</span><span>Value</span></div>
    ${shown.map((h, i) => {
      const name = `${prefix}.${i}`;
      return html`<div class="pair-row" ${headerEmpty(h) ? html` data-row-empty` : ''}>
        ${cell(`${name}.name`, `${legend} ${i + 1} name`, errors, (id, invalid) =>
          input({ id, name: `${name}.name`, value: h.name, placeholder: 'Name', invalid }),
        )}
        ${cell(`${name}.value`, `${legend} ${i + 1} value`, errors, (id, invalid) =>
          h.kept
            ? html`${input({ id, name: `${name}.value`, value: h.value, type: 'password', placeholder: '••••••', invalid })}
                <input type="hidden" name="${name}.kept" value="1" />
                <div class="help">Stored: kept unless you type a new value.</div>`
            : input({ id, name: `${name}.value`, value: h.value, placeholder: 'Value', invalid }),
        )}
      </div>`;
    })}
  </div>`;
}

export function input(o: { id: string; name: string; value: string; type?: string; placeholder?: string; invalid: boolean }): Html {
  return html`<input
    id="${o.id}"
    name="${o.name}"
    type="${o.type ?? 'text'}"
    value="${o.value}"
    autocomplete="${o.type === 'password' ? 'new-password' : 'off'}"
    ${o.placeholder ? html` placeholder="${o.placeholder}"` : ''}${o.invalid ? html` aria-invalid="true"` : ''}
  />`;
}

/** One cell of a row: a label for screen readers and phones (the row's head shows it on wide screens), the control, its errors. */
export function cell(name: string, label: string, errors: FieldErrors | undefined, control: (id: string, invalid: boolean) => Html): Html {
  const errs = fieldErrors(errors, name);
  const id = `f-${name}`;
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label class="row-label" for="${id}">${label}</label>
    ${control(id, errs.length > 0)} ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

export function options(list: readonly (readonly [value: string, text: string, types?: string])[], chosen: string): Html[] {
  return list.map(
    ([value, label, types]) =>
      html`<option value="${value}" ${value === chosen ? html` selected` : ''}${types ? html` data-types="${types}"` : ''}>
        ${label}
      </option>`,
  );
}

const bodyHelp = (editing: boolean) =>
  editing ? 'Write-only: a stored body is kept unless you type a new one.' : 'Stored encrypted; never shown again.';

/** The HTTP type's own settings (the method and codes are the monitor's, shown beside them). */
export function httpSettingsFields(values: CheckValues, errors: FieldErrors | undefined, editing: boolean): Html {
  return html`${headerRowsField('http.headers', 'Header', values.http.headers, errors)}
  ${textareaField({ name: 'http.body', label: 'Request body (optional)', value: values.http.body, rows: 3, errors, help: bodyHelp(editing) })}
  ${editing ? checkbox({ name: 'http.body_clear', label: 'Remove the stored body', checked: values.http.clearBody }) : ''}`;
}

function stepBlock(s: StepRow, i: number, errors: FieldErrors | undefined, editing: boolean): Html {
  const p = `multistep.steps.${i}`;
  const hasErrors = Object.keys(errors ?? {}).some((k) => k.startsWith(`${p}.`));
  const open = i === 0 || s.name !== '' || s.url !== '' || hasErrors;
  return html`<details class="step" ${open ? html` open` : ''}>
    <summary>Step ${i + 1}${s.name ? html`: ${s.name}` : ''}</summary>
    <div class="form-row">
      ${field({ name: `${p}.name`, label: 'Name', value: s.name, errors, placeholder: i === 0 ? 'log in' : '' })}
      ${selectField({ name: `${p}.method`, label: 'Method', value: s.method || 'GET', options: stepMethods.map((m) => [m, m] as const), errors })}
    </div>
    ${field({ name: `${p}.url`, label: 'URL', value: s.url, errors, placeholder: 'https://api.example.com/orders?token={{token}}', help: 'An http(s) URL; {{name}} takes a value an earlier step extracted.' })}
    <div class="form-row">
      ${textareaField({ name: `${p}.headers`, label: 'Headers', value: s.headers, rows: 2, errors, errorPrefix: `${p}.headers`, placeholder: 'Authorization: Bearer {{token}}', help: editing ? 'One Name: value a line. A name alone keeps its stored value.' : 'One Name: value a line.' })}
      ${textareaField({ name: `${p}.body`, label: 'Body', value: s.body, rows: 2, errors, help: bodyHelp(editing) })}
    </div>
    ${editing ? checkbox({ name: `${p}.body_clear`, label: 'Remove the stored body', checked: s.clearBody }) : ''}
    <div class="form-row">
      ${field({ name: `${p}.valid_http_codes`, label: 'Accepted status codes', value: s.codes, errors, errorPrefix: `${p}.valid_http_codes`, placeholder: '200-299' })}
      ${field({ name: `${p}.timeout`, label: 'Timeout (seconds)', type: 'number', value: s.timeout, min: 1, max: 60, errors, placeholder: "The monitor's" })}
    </div>
    ${textareaField({ name: `${p}.extract`, label: 'Extract', value: s.extract, rows: 2, errors, errorPrefix: `${p}.extract`, placeholder: 'token = json $.token', help: 'One a line: name = json $.path, name = header Header-Name, or name = body /pattern (group)/.' })}
    ${textareaField({ name: `${p}.assertions`, label: 'Assertions', value: s.assertions, rows: 2, errors, errorPrefix: `${p}.assertions`, placeholder: 'json $.count greater_than 0', help: 'One a line: source [path] operator [target], such as status_code equals 201; start with degraded: for a degraded one.' })}
  </details>`;
}

/** The fieldsets of the types other than HTTP, each shown (by app.js) only while its type is chosen. */
export function otherTypeFieldsets(values: CheckValues, errors: FieldErrors | undefined, editing: boolean): Html {
  const steps = values.multistep.steps;
  const stepCount = rowCount(steps, stepEmpty, 5, MAX_STEPS);
  const emptyStep: StepRow = {
    name: '',
    method: 'GET',
    url: '',
    headers: '',
    body: '',
    clearBody: false,
    codes: '',
    extract: '',
    assertions: '',
    timeout: '',
  };
  return html`<fieldset class="stack" data-types="tcp">
      <legend>TCP</legend>
      ${checkbox({ name: 'tcp.tls', label: 'Open TLS once connected (the certificate is checked)', checked: values.tcp.tls })}
      ${textareaField({ name: 'tcp.send', label: 'Send (optional)', value: values.tcp.send, rows: 2, errors, placeholder: 'PING', help: 'Written once connected; line breaks are sent as CRLF.' })}
      ${field({ name: 'tcp.expect', label: 'Expect (optional)', value: values.tcp.expect, errors, placeholder: '+PONG', help: 'Text the server must send back.' })}
    </fieldset>
    <fieldset class="stack" data-types="dns">
      <legend>DNS</legend>
      <div class="form-row">
        ${selectField({ name: 'dns.record_type', label: 'Record type', value: values.dns.recordType || 'A', options: dnsRecordTypes.map((t) => [t, t] as const), errors })}
        ${field({ name: 'dns.resolver_port', label: 'Resolver port', type: 'number', value: values.dns.resolverPort, min: 1, max: 65535, errors })}
      </div>
      ${field({ name: 'dns.resolver', label: 'Resolver (optional)', value: values.dns.resolver, errors, placeholder: '1.1.1.1', help: "A host name or address; empty: the probe host's own resolvers. Expected answers are assertions on dns_answer." })}
    </fieldset>
    <fieldset class="stack" data-types="icmp">
      <legend>Ping</legend>
      ${field({ name: 'icmp.count', label: 'Pings per check', type: 'number', value: values.icmp.count, min: 1, max: 10, errors, help: 'Passes when at least one reply comes back.' })}
    </fieldset>
    <fieldset class="stack" data-types="websocket">
      <legend>WebSocket</legend>
      ${headerRowsField('websocket.headers', 'Header', values.websocket.headers, errors)}
      ${field({ name: 'websocket.send', label: 'Send (optional)', value: values.websocket.send, errors, help: 'A text message sent once open.' })}
      ${field({ name: 'websocket.expect', label: 'Expect (optional)', value: values.websocket.expect, errors, help: 'Text a message from the server must contain.' })}
    </fieldset>
    <fieldset class="stack" data-types="grpc">
      <legend>gRPC health</legend>
      ${field({ name: 'grpc.service', label: 'Service (optional)', value: values.grpc.service, errors, placeholder: 'The server as a whole', help: 'The service grpc.health.v1 is asked about.' })}
      ${headerRowsField('grpc.metadata', 'Metadata', values.grpc.metadata, errors)}
    </fieldset>
    <fieldset class="stack" data-types="multistep">
      <legend>Steps</legend>
      <p class="help">Requests made in order; the first that fails ends the check. Empty steps are ignored.</p>
      ${Array.from({ length: stepCount }, (_, i) => stepBlock(steps[i] ?? emptyStep, i, errors, editing))}
    </fieldset>`;
}

/** The assertions editor: rows of source, path, operator, target and severity; empty rows are ignored. */
export function assertionsFieldset(values: CheckValues, errors: FieldErrors | undefined): Html {
  const rows = values.assertions;
  const count = rowCount(rows, assertionEmpty, 8, MAX_ASSERTIONS);
  const sources = assertionSources.map((s) => [s, s, monitorTypes.filter((t) => sourcesOf[t].includes(s)).join(' ')] as const);
  return html`<fieldset class="stack">
    <legend>Assertions (optional)</legend>
    <p class="help">
      Conditions the check must also meet. A path is a JSONPath ($.status) for json, a header name for header. The target is a number for
      times, codes and comparisons, a comma-separated list for <code>in</code>. Severity degraded keeps the check passing and marks the
      monitor degraded.
    </p>
    <div class="rows" data-testid="assertions" data-rows="Add an assertion">
      <div class="rows-head assertion-row" aria-hidden="true">
        <span>Source</span><span>Path</span><span>Operator</span><span>Target</span><span>Severity</span>
      </div>
      ${Array.from({ length: count }, (_, i) => {
        const a = rows[i] ?? { source: '', path: '', operator: 'equals', target: '', severity: 'down' };
        const name = `assertion.${i}`;
        return html`<div class="assertion-row" ${assertionEmpty(a) ? html` data-row-empty` : ''}>
          ${cell(
            `${name}.source`,
            `Assertion ${i + 1} source`,
            errors,
            (id, invalid) =>
              html`<select id="${id}" name="${name}.source" ${invalid ? html` aria-invalid="true"` : ''}>
                ${options([['', '—'], ...sources], a.source)}
              </select>`,
          )}
          ${cell(`${name}.path`, `Assertion ${i + 1} path`, errors, (id, invalid) =>
            input({ id, name: `${name}.path`, value: a.path, placeholder: 'Path', invalid }),
          )}
          ${cell(
            `${name}.operator`,
            `Assertion ${i + 1} operator`,
            errors,
            (id, invalid) =>
              html`<select id="${id}" name="${name}.operator" ${invalid ? html` aria-invalid="true"` : ''}>
                ${options(
                  assertionOperators.map((o) => [o, o.replace(/_/g, ' ')] as const),
                  a.operator,
                )}
              </select>`,
          )}
          ${cell(`${name}.target`, `Assertion ${i + 1} target`, errors, (id, invalid) =>
            input({ id, name: `${name}.target`, value: a.target, placeholder: 'Target', invalid }),
          )}
          ${cell(
            `${name}.severity`,
            `Assertion ${i + 1} severity`,
            errors,
            (id, invalid) =>
              html`<select id="${id}" name="${name}.severity" ${invalid ? html` aria-invalid="true"` : ''}>
                ${options(
                  [
                    ['down', 'down'],
                    ['degraded', 'degraded'],
                  ],
                  a.severity,
                )}
              </select>`,
          )}
        </div>`;
      })}
    </div>
  </fieldset>`;
}
