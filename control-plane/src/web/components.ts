import { relativeTime } from '../platform/http/time.ts';
import { CSRF_FIELD } from './csrf.ts';
import { html, type Child, type Html } from './html.ts';

export const csrfInput = (token: string) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`;

const monitorStatusNames: Record<number, string> = { 0: 'pending', 1: 'up', 2: 'down', 3: 'paused', 4: 'degraded' };

export function monitorStatusName(status: number): string {
  return monitorStatusNames[status] ?? 'pending';
}

export function monitorPill(status: number, big = false): Html {
  const name = monitorStatusName(status);
  return html`<span class="pill ${name}${big ? ' big' : ''}" data-status="${name}">${name[0]!.toUpperCase() + name.slice(1)}</span>`;
}

export function heartbeatPill(status: string, big = false): Html {
  return html`<span class="pill ${status}${big ? ' big' : ''}" data-status="${status}"
    >${status[0]!.toUpperCase() + status.slice(1)}</span
  >`;
}

/** A POST button in its own small form, carrying the CSRF token. */
export function postButton(opts: {
  action: string;
  label: string;
  csrf: string;
  kind?: 'primary' | 'danger' | 'plain';
  confirm?: string;
  small?: boolean;
  fields?: Record<string, string>;
}): Html {
  const cls = ['btn', opts.kind === 'primary' ? 'btn-primary' : opts.kind === 'danger' ? 'btn-danger' : '', opts.small ? 'btn-sm' : '']
    .filter(Boolean)
    .join(' ');
  return html`<form method="post" action="${opts.action}" class="inline" ${opts.confirm ? html` data-confirm="${opts.confirm}"` : ''}>
    ${csrfInput(opts.csrf)}${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
    <button type="submit" class="${cls}">${opts.label}</button>
  </form>`;
}

export function copyRow(value: string, label = 'Copy', testId?: string): Html {
  // The value scrolls sideways when long: focusable, so a keyboard can scroll it too.
  return html`<div class="copy-row">
    <code tabindex="0" ${testId ? html` data-testid="${testId}"` : ''}>${value}</code
    ><button type="button" class="btn btn-sm" data-copy="${value}">${label}</button>
  </div>`;
}

/** A multi-line snippet (a crontab line, a config) with a copy button. */
export function snippet(text: string, testId?: string): Html {
  return html`<div class="snippet-box">
    <pre class="snippet" ${testId ? html` data-testid="${testId}"` : ''}>${text}</pre>
    <button type="button" class="btn btn-sm" data-copy="${text}">Copy</button>
  </div>`;
}

export interface FieldOpts {
  name: string;
  label: string;
  value?: string | number | null | undefined;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'datetime-local';
  help?: Child;
  errors?: Record<string, string[]>;
  /** Error keys shown under this field besides its own name (e.g. `valid_http_codes.0`). */
  errorPrefix?: string;
  required?: boolean;
  placeholder?: string;
  autocomplete?: string;
  min?: number;
  max?: number;
  autofocus?: boolean;
  /** `data-*` attributes of the input, for app.js (`{ 'label-tcp': 'Address' }` is `data-label-tcp`). */
  data?: Record<string, string>;
}

const dataAttributes = (data: Record<string, string> | undefined): Html[] =>
  Object.entries(data ?? {}).map(([k, v]) => html` data-${k}="${v}"`);

/** Messages written for API clients name the field; under the field itself, "this field" reads better. */
const underField = (m: string) =>
  m.replace(/^The [\w.]+ field/, 'This field').replace(/^The selected [\w.]+ is invalid/, 'This choice is invalid');

export function fieldErrors(errors: Record<string, string[]> | undefined, name: string, prefix = name): string[] {
  if (!errors) return [];
  return Object.entries(errors)
    .filter(([k]) => k === name || k.startsWith(`${prefix}.`))
    .flatMap(([, v]) => v.map(underField));
}

export function field(o: FieldOpts): Html {
  const errs = fieldErrors(o.errors, o.name, o.errorPrefix);
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-${o.name}">${o.label}</label>
    <input
      id="f-${o.name}"
      name="${o.name}"
      type="${o.type ?? 'text'}"
      value="${o.value ?? ''}"
      ${o.required ? html` required` : ''}${
        o.placeholder ? html` placeholder="${o.placeholder}"` : ''
      }${o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''}${o.min !== undefined ? html` min="${o.min}"` : ''}${
        o.max !== undefined ? html` max="${o.max}"` : ''
      }${o.autofocus ? html` autofocus` : ''}${errs.length ? html` aria-invalid="true"` : ''}${dataAttributes(o.data)}
    />
    ${o.help ? html`<div class="help">${o.help}</div>` : ''} ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

/** A multi-line text field; its value is shown exactly (a leading line break included). */
export function textareaField(o: {
  name: string;
  label: string;
  value: string;
  rows?: number;
  help?: Child;
  errors?: Record<string, string[]>;
  errorPrefix?: string;
  placeholder?: string;
}): Html {
  const errs = fieldErrors(o.errors, o.name, o.errorPrefix);
  // The parser drops one line break right after <textarea>: this one, not the value's own.
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-${o.name}">${o.label}</label>
    <textarea
      id="f-${o.name}"
      name="${o.name}"
      rows="${o.rows ?? 3}"
      ${o.placeholder ? html` placeholder="${o.placeholder}"` : ''}${errs.length ? html` aria-invalid="true"` : ''}
    >
${o.value}</textarea>
    ${o.help ? html`<div class="help">${o.help}</div>` : ''} ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

export function selectField(o: {
  name: string;
  label: string;
  value: string;
  options: readonly (readonly [string, string])[];
  help?: Child;
  errors?: Record<string, string[]>;
}): Html {
  const errs = fieldErrors(o.errors, o.name);
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-${o.name}">${o.label}</label>
    <select id="f-${o.name}" name="${o.name}">
      ${o.options.map(([v, text]) => html`<option value="${v}" ${v === o.value ? html` selected` : ''}>${text}</option>`)}
    </select>
    ${o.help ? html`<div class="help">${o.help}</div>` : ''} ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

export function checkbox(o: { name: string; label: string; checked: boolean; help?: Child; value?: string }): Html {
  return html`<div class="field">
    <label class="check"
      ><input type="checkbox" name="${o.name}" value="${o.value ?? 'on'}" ${o.checked ? html` checked` : ''} /> ${o.label}</label
    >${o.help ? html`<div class="help">${o.help}</div>` : ''}
  </div>`;
}

export function formErrorSummary(errors: Record<string, string[]> | undefined, known: readonly string[]): Html {
  if (!errors) return html``;
  const other = Object.entries(errors).filter(([k]) => !known.some((n) => k === n || k.startsWith(`${n}.`)));
  if (other.length === 0) return html`<div class="flash error" role="alert">Please correct the fields marked below.</div>`;
  return html`<div class="flash error" role="alert">${other.flatMap(([, v]) => v).map((m) => html`<div>${m}</div>`)}</div>`;
}

export function emptyState(title: string, text: Child, action?: Html): Html {
  return html`<div class="empty">
    <h2>${title}</h2>
    <p>${text}</p>
    ${action ?? ''}
  </div>`;
}

/** "3.2 s", "245 ms" */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s` : `${Math.round(ms)} ms`;
}

export function formatUptime(percent: number | null | undefined): string {
  if (percent === null || percent === undefined) return '–';
  return percent >= 99.995 ? '100%' : `${percent.toFixed(percent >= 99 ? 2 : 1)}%`;
}

/** "4 min", "2 h 5 min", "3 d 4 h" */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** A run's length: "20 ms", "4.2 s", "12 s", "4 min", "2 h 5 min". */
export function formatSeconds(seconds: number): string {
  if (seconds < 1) return formatMs(seconds * 1000);
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  return formatDuration(Math.round(seconds));
}

/** "512 B", "4.2 KB", "1.3 MB" */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** An ISO timestamp as a <time> element the reader can hover for the exact instant. */
export function timeTag(iso: string | null, text: string): Html {
  if (!iso) return html`<span class="faint">${text}</span>`;
  return html`<time datetime="${iso}" title="${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}">${text}</time>`;
}

/** "in 4 minutes" or "4 minutes ago" (relativeTime only looks back). */
export function fromNow(iso: string | null, now: Date, none = '–'): string {
  if (!iso) return none;
  const at = new Date(iso);
  if (at.getTime() <= now.getTime()) return relativeTime(at, now);
  const ago = relativeTime(now, at);
  return ago === 'just now' ? 'in a moment' : `in ${ago.replace(/ ago$/, '')}`;
}

export function heartbeatSchedule(h: { cron_schedule: string | null; period: number | null; timezone: string }): Html {
  if (h.cron_schedule)
    return html`<code>${h.cron_schedule}</code>${h.timezone !== 'UTC' ? html` <span class="faint">${h.timezone}</span>` : ''}`;
  if (h.period) return html`every ${formatDuration(h.period)}`;
  return html`<span class="faint">no schedule</span>`;
}
