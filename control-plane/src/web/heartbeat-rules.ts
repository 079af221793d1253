import type { Heartbeat } from '../heartbeats/schemas.ts';
import { DEFAULT_SUCCESS_EXIT_CODES, outputMatches, outputOutcomes } from '../heartbeats/output.ts';
import { cell, input, options, rowCount, rowsOf } from './check-fields.ts';
import { field, formatDuration } from './components.ts';
import { text, type Form } from './context.ts';
import type { FieldErrors } from './form.ts';
import { html, type Html } from './html.ts';

/**
 * The heartbeat form's run rules (state.ts, output.ts): run-time limits, the too-frequent limit,
 * failure tolerance, the exit codes that mean success and the output rules, and how the detail
 * page sums them up. Output rules are a fixed number of rows, so the form works without
 * JavaScript; empty rows are left out and `rows` remembers which row each rule the API sees came
 * from, so an API error (`output_rules.1.value`) lands under its field.
 *
 * The too-frequent limit is entered as a percentage of the expected interval (50 for the API's
 * 0.5): people think of "half the interval" more readily than of a fraction.
 */

const MAX_OUTPUT_RULES = 20;

export interface OutputRuleRow {
  match: string;
  value: string;
  outcome: string;
}

export interface RunRuleValues {
  maxDuration: string;
  minDuration: string;
  /** Percent of the expected interval. */
  tooFrequent: string;
  alertAfter: string;
  exitCodes: string;
  outputRules: OutputRuleRow[];
}

/** The form's own names of the run-rule fields, for the summary above the form. */
export const runRuleFieldNames: readonly string[] = [
  'max_duration',
  'min_duration',
  'too_frequent_percent',
  'alert_after_failures',
  'success_exit_codes',
  'output_rules',
];

/** A fraction as the percentage the form shows: 0.5 -> "50", 0.07 -> "7" (no float noise). */
export function percentText(ratio: number): string {
  return String(Number((ratio * 100).toPrecision(12)));
}

/** Exit codes as people write them: in their order, three or more in a row as a range ("0, 3-5"). */
export function exitCodesText(codes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < codes.length;) {
    let j = i;
    while (j + 1 < codes.length && codes[j + 1] === codes[j]! + 1) j++;
    if (j - i >= 2) parts.push(`${codes[i]}-${codes[j]}`);
    else for (let k = i; k <= j; k++) parts.push(String(codes[k]));
    i = j + 1;
  }
  return parts.join(', ');
}

/** The inverse of exitCodesText: codes and ranges separated by commas or spaces, each code once. */
export function parseExitCodes(input: string): { codes: number[] } | { problem: string } {
  const codes: number[] = [];
  for (const part of input.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d{1,3})(?:-(\d{1,3}))?$/.exec(part);
    const from = m ? Number(m[1]) : NaN;
    const to = m ? Number(m[2] ?? m[1]) : NaN;
    if (!m || from > 255 || to > 255)
      return { problem: `“${part}” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.` };
    if (to < from) return { problem: `“${part}”: a range goes from the lower code to the higher one.` };
    for (let c = from; c <= to; c++) if (!codes.includes(c)) codes.push(c);
  }
  if (codes.length === 0) return { problem: 'List at least one exit code.' };
  return { codes };
}

/** A percentage above 0 and up to 100, as a fraction; undefined when the text is not one. */
export function parsePercent(input: string): number | undefined {
  if (!/^\d+(\.\d+)?$/.test(input)) return undefined;
  const percent = Number(input);
  return percent > 0 && percent <= 100 ? percent / 100 : undefined;
}

const emptyRule: OutputRuleRow = { match: 'contains', value: '', outcome: 'fail' };
const ruleEmpty = (r: OutputRuleRow): boolean => r.value === '';

export function runRuleValuesOf(h: Heartbeat | undefined): RunRuleValues {
  return {
    maxDuration: h?.max_duration != null ? String(h.max_duration) : '',
    minDuration: h?.min_duration != null ? String(h.min_duration) : '',
    tooFrequent: h?.too_frequent_ratio != null ? percentText(h.too_frequent_ratio) : '',
    alertAfter: String(h?.alert_after_failures ?? 1),
    exitCodes: exitCodesText(h?.success_exit_codes ?? DEFAULT_SUCCESS_EXIT_CODES),
    outputRules: (h?.output_rules ?? []).map((r) => ({ ...r })),
  };
}

export function runRuleValuesFrom(form: Form): RunRuleValues {
  return {
    maxDuration: text(form, 'max_duration'),
    minDuration: text(form, 'min_duration'),
    tooFrequent: text(form, 'too_frequent_percent'),
    alertAfter: text(form, 'alert_after_failures'),
    exitCodes: text(form, 'success_exit_codes'),
    outputRules: rowsOf(form, 'output_rules', 'value', MAX_OUTPUT_RULES, (at) => ({
      match: at('match').trim() || 'contains',
      // Kept exactly: a space can be part of what a rule looks for.
      value: at('value'),
      outcome: at('outcome').trim() || 'fail',
    })),
  };
}

export interface RunRulesRead {
  /** The API's fields. */
  body: Record<string, unknown>;
  /** What the form finds wrong itself, by the form's field names. */
  problems: FieldErrors;
  /** The form row of each output rule the API sees. */
  rows: number[];
}

/** A number field sent as typed when it is not one: the schema names what is wrong with it. */
const numberOr = (value: string): number | string => (/^\d+$/.test(value) ? Number(value) : value);

/**
 * The run rules as the API takes them: an empty field is null (no limit) or the default. On an
 * edit, a percentage or a list of codes shown for the stored value and left as it was sends the
 * stored value itself, so saving the form changes nothing that was not touched.
 */
export function readRunRules(v: RunRuleValues, stored?: Heartbeat): RunRulesRead {
  const problems: FieldErrors = {};
  const body: Record<string, unknown> = {
    max_duration: v.maxDuration === '' ? null : numberOr(v.maxDuration),
    min_duration: v.minDuration === '' ? null : numberOr(v.minDuration),
    alert_after_failures: v.alertAfter === '' ? 1 : numberOr(v.alertAfter),
  };

  if (v.tooFrequent === '') body['too_frequent_ratio'] = null;
  else if (stored?.too_frequent_ratio != null && v.tooFrequent === percentText(stored.too_frequent_ratio))
    body['too_frequent_ratio'] = stored.too_frequent_ratio;
  else {
    const ratio = parsePercent(v.tooFrequent);
    if (ratio === undefined) problems['too_frequent_percent'] = ['Enter a percentage above 0 and at most 100, such as 50.'];
    else body['too_frequent_ratio'] = ratio;
  }

  if (v.exitCodes === '') body['success_exit_codes'] = [...DEFAULT_SUCCESS_EXIT_CODES];
  else if (stored && v.exitCodes === exitCodesText(stored.success_exit_codes)) body['success_exit_codes'] = stored.success_exit_codes;
  else {
    const parsed = parseExitCodes(v.exitCodes);
    if ('problem' in parsed) problems['success_exit_codes'] = [parsed.problem];
    else body['success_exit_codes'] = parsed.codes;
  }

  const rows: number[] = [];
  const rules: OutputRuleRow[] = [];
  v.outputRules.forEach((r, i) => {
    if (ruleEmpty(r)) return;
    rules.push(r);
    rows.push(i);
  });
  body['output_rules'] = rules;
  return { body, problems, rows };
}

/** API names in the service's messages, as the form labels them. */
const plain = (m: string) => m.replace(/\bmax_duration\b/g, 'the max duration').replace(/\bthe grace_period\b/g, 'the grace period');

/** The API's field errors of the run rules under the form's fields; others pass through. */
export function runRuleErrors(errors: FieldErrors, rows: readonly number[]): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, messages] of Object.entries(errors)) {
    const [head, index, ...rest] = key.split('.');
    let place = key;
    if (head === 'too_frequent_ratio') place = 'too_frequent_percent';
    else if (head === 'success_exit_codes') place = 'success_exit_codes';
    else if (head === 'output_rules' && index !== undefined) place = ['output_rules', rows[Number(index)] ?? index, ...rest].join('.');
    (out[place] ??= []).push(...messages.map(plain));
  }
  return out;
}

const matchNames: Record<(typeof outputMatches)[number], string> = { contains: 'contains', regex: 'matches regex' };
const outcomeNames: Record<(typeof outputOutcomes)[number], string> = { fail: 'mark failed', success: 'mark success' };

const isDefault = (v: RunRuleValues): boolean =>
  v.maxDuration === '' &&
  v.minDuration === '' &&
  v.tooFrequent === '' &&
  (v.alertAfter === '' || v.alertAfter === '1') &&
  (v.exitCodes === '' || v.exitCodes === exitCodesText(DEFAULT_SUCCESS_EXIT_CODES)) &&
  v.outputRules.every(ruleEmpty);

function outputRuleRows(rules: readonly OutputRuleRow[], errors: FieldErrors | undefined): Html {
  const count = rowCount(rules, ruleEmpty, 3, MAX_OUTPUT_RULES);
  const whole = errors?.['output_rules'] ?? [];
  return html`<fieldset class="stack">
    <legend>Output rules</legend>
    <p class="help">
      Checked against the body the job posts with its ping (its output, as much as is kept). <em>Mark failed</em> makes a success whose
      output matches a failure, <em>mark success</em> makes a failure whose output matches a success; the first rule that applies decides.
      Text is matched as written (case counts); a regex is RE2. Empty rows are ignored.
    </p>
    <div class="rows" data-testid="output-rules" data-rows="Add an output rule">
      <div class="rows-head rule-row" aria-hidden="true"><span>If the output</span><span>Text or pattern</span><span>Then</span></div>
      ${Array.from({ length: count }, (_, i) => {
        const r = rules[i] ?? emptyRule;
        const name = `output_rules.${i}`;
        return html`<div class="rule-row" ${ruleEmpty(r) ? html` data-row-empty` : ''}>
          ${cell(
            `${name}.match`,
            `Rule ${i + 1}: output`,
            errors,
            (id, invalid) =>
              html`<select id="${id}" name="${name}.match" ${invalid ? html` aria-invalid="true"` : ''}>
                ${options(
                  outputMatches.map((m) => [m, matchNames[m]] as const),
                  r.match,
                )}
              </select>`,
          )}
          ${cell(`${name}.value`, `Rule ${i + 1}: text or pattern`, errors, (id, invalid) =>
            input({ id, name: `${name}.value`, value: r.value, placeholder: i === 0 ? 'ERROR' : '', invalid }),
          )}
          ${cell(
            `${name}.outcome`,
            `Rule ${i + 1}: then`,
            errors,
            (id, invalid) =>
              html`<select id="${id}" name="${name}.outcome" ${invalid ? html` aria-invalid="true"` : ''}>
                ${options(
                  outputOutcomes.map((o) => [o, outcomeNames[o]] as const),
                  r.outcome,
                )}
              </select>`,
          )}
        </div>`;
      })}
    </div>
    ${whole.map((m) => html`<div class="error">${m}</div>`)}
  </fieldset>`;
}

/** The run rules, folded away until one is set or has an error. */
export function runRulesFields(v: RunRuleValues, errors: FieldErrors | undefined): Html {
  const hasErrors = Object.keys(errors ?? {}).some((k) => runRuleFieldNames.some((n) => k === n || k.startsWith(`${n}.`)));
  const open = hasErrors || !isDefault(v);
  return html`<details class="form-section" data-testid="run-rules" ${open ? html` open` : ''}>
    <summary>Run rules <span class="faint">(optional): run time, failures in a row, exit codes, output</span></summary>
    <div class="stack">
      <div class="form-row">
        ${field({ name: 'max_duration', label: 'Max duration (seconds)', type: 'number', value: v.maxDuration, min: 1, errors, placeholder: 'The grace period', help: 'How long a run may take after its /start before the heartbeat goes down. Empty: the grace period.' })}
        ${field({ name: 'min_duration', label: 'Min duration (seconds)', type: 'number', value: v.minDuration, min: 1, errors, placeholder: 'None', help: 'A run that reports success sooner than this after its /start counts as failed (too short). Empty: none.' })}
      </div>
      <div class="form-row">
        ${field({ name: 'too_frequent_percent', label: 'Too frequent below (% of the interval)', value: v.tooFrequent, errors, placeholder: 'Off', help: 'A success sooner than this share of the expected interval after the previous one counts as failed: 50 means half the period. Empty: off.' })}
        ${field({ name: 'alert_after_failures', label: 'Alert after failed runs in a row', type: 'number', value: v.alertAfter, min: 1, max: 100, errors, placeholder: '1', help: 'The heartbeat goes down at this many failed runs in a row, 1 to 100. A missed run always alerts.' })}
      </div>
      ${field({ name: 'success_exit_codes', label: 'Exit codes that mean success', value: v.exitCodes, errors, errorPrefix: 'success_exit_codes', placeholder: '0', help: html`For pings to <code>/&lt;exit code&gt;</code>: codes and ranges, such as <code>0, 3-5</code>; any other code is a failure. Empty: 0.` })}
      ${outputRuleRows(v.outputRules, errors)}
    </div>
  </details>`;
}

/** Whole minutes and hours as such, other lengths in seconds (90 s is not "1 min"). */
export const secondsText = (s: number): string => (s >= 60 && s % 60 !== 0 ? `${s} s` : formatDuration(s));

/** The run rules a heartbeat has that differ from the defaults, as facts for its settings card. */
export function runRulesFacts(h: Heartbeat): Html {
  const facts: Html[] = [];
  const fact = (term: string, value: Html | string) =>
    facts.push(
      html`<dt>${term}</dt>
        <dd>${value}</dd>`,
    );
  if (h.max_duration !== null) fact('Max duration', secondsText(h.max_duration));
  if (h.min_duration !== null) fact('Min duration', secondsText(h.min_duration));
  if (h.too_frequent_ratio !== null) fact('Too frequent', `sooner than ${percentText(h.too_frequent_ratio)}% of the interval`);
  if (h.alert_after_failures !== 1) fact('Alert after', `${h.alert_after_failures} failed runs in a row`);
  if (exitCodesText(h.success_exit_codes) !== exitCodesText(DEFAULT_SUCCESS_EXIT_CODES))
    fact('Success exit codes', exitCodesText(h.success_exit_codes));
  if (h.output_rules.length > 0)
    fact(
      'Output rules',
      html`<ol class="output-rules">
        ${h.output_rules.map(
          (r) =>
            html`<li>
              ${r.match === 'regex' ? 'matches' : 'contains'} <code>${r.value}</code> → ${r.outcome === 'fail' ? 'failed' : 'success'}
            </li>`,
        )}
      </ol>`,
    );
  return html`${facts}`;
}
