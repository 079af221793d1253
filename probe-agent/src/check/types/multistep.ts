import { performance } from 'node:perf_hooks';
import type { AssertionOutcome, Extraction, StepSettings } from '../../../../shared/src/contracts/checks.ts';
import {
  assertionVerdict,
  compiledPattern,
  evaluateAssertions,
  lazyJson,
  readJsonPath,
  type LazyJson,
} from '../../../../shared/src/checks/assertions.ts';
import type { CheckError } from '../classify.ts';
import type { CheckTarget, Checker } from '../check.ts';
import { httpProbeOutcome, noTimings, type ProbeResult } from './probe.ts';

/**
 * Multi-step API checks: requests made in order, each with its own assertions; values extracted
 * from one response (`extract`) fill `{{name}}` in later steps' URL, headers and body. The first
 * failing step ends the check and is its evidence. Every step gets at most its own timeout and
 * never more than what is left of the monitor's.
 */

export type StepsOptions = {
  checker: Pick<Checker, 'run'>;
  /** The monitor's timeout: the whole run's budget. */
  timeoutMs: number;
  followRedirects: boolean;
  signal: AbortSignal;
};

const ALL_2XX = Array.from({ length: 100 }, (_, i) => 200 + i);
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** `{{name}}` replaced by its value; `encode` for URLs. An unknown name is an error, not an empty string. */
export function fillTemplate(
  text: string,
  vars: ReadonlyMap<string, string>,
  encode = false,
): { ok: true; text: string } | { ok: false; name: string } {
  if (!text.includes('{{')) return { ok: true, text };
  let missing: string | undefined;
  const out = text.replace(VARIABLE, (_, name: string) => {
    const v = vars.get(name);
    if (v === undefined) {
      missing ??= name;
      return '';
    }
    return encode ? encodeURIComponent(v) : v;
  });
  return missing === undefined ? { ok: true, text: out } : { ok: false, name: missing };
}

/** The value an extraction takes from a step's response; undefined when there is none. */
export function extractValue(
  x: Extraction,
  response: { body?: string; headers?: Record<string, string> },
  json: LazyJson = lazyJson(response.body),
): string | undefined {
  if (x.source === 'header') return response.headers?.[x.path.toLowerCase()];
  if (x.source === 'body') {
    const m = compiledPattern(x.path).matcher(response.body ?? '');
    if (!m.find()) return undefined;
    return m.groupCount() >= 1 ? (m.group(1) ?? undefined) : (m.group(0) ?? undefined);
  }
  const doc = json();
  if (!doc.ok) return undefined;
  const v = readJsonPath(x.path, doc.value)[0];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** No line breaks into a header: an extracted value must not add headers of its own. */
const headerSafe = (v: string) => v.replace(/[\r\n\0]/g, ' ');

export async function runSteps(steps: readonly StepSettings[], opts: StepsOptions): Promise<ProbeResult> {
  const startedAt = performance.now();
  const deadline = startedAt + opts.timeoutMs;
  const vars = new Map<string, string>();
  const details: NonNullable<NonNullable<ProbeResult['details']>['steps']> = [];
  const assertions: AssertionOutcome[] = [];
  let degraded = false;
  let lastStatus: number | null = null;
  let ttfb = 0;

  const end = (error: CheckError | null, observed: ProbeResult['observed'] = {}): ProbeResult => {
    const total = Math.round((performance.now() - startedAt) * 1000) / 1000;
    return {
      ok: error === null,
      status_code: lastStatus,
      timings: { ...noTimings, ttfb, total },
      error,
      observed: { ...observed, response_time: total },
      details: { steps: details },
      ...(assertions.length > 0 ? { assertions } : {}),
      degraded: error === null && degraded,
    };
  };
  const stepFailed = (name: string, cls: CheckError['class'], message: string, status: number | null, ms: number) => {
    details.push({ name, ok: false, status_code: status, total_ms: ms, error: message });
    return end({ class: cls, message: `Step "${name}": ${message}` });
  };

  for (const step of steps) {
    const left = deadline - performance.now();
    if (left <= 0) return stepFailed(step.name, 'timeout', `Timed out after ${opts.timeoutMs} ms (the whole check)`, null, 0);
    const url = fillTemplate(step.url, vars, true);
    if (!url.ok) return stepFailed(step.name, 'other', `No value for {{${url.name}}}`, null, 0);
    const headers: Array<{ name: string; value: string }> = [];
    for (const h of step.headers) {
      if (h.value === null) continue;
      const v = fillTemplate(h.value, vars);
      if (!v.ok) return stepFailed(step.name, 'other', `No value for {{${v.name}}}`, null, 0);
      headers.push({ name: h.name, value: headerSafe(v.text) });
    }
    let body: string | null = null;
    if (step.body !== null && step.body !== '') {
      const b = fillTemplate(step.body, vars);
      if (!b.ok) return stepFailed(step.name, 'other', `No value for {{${b.name}}}`, null, 0);
      body = b.text;
    }
    let captureHeaders = false;
    let captureBody = false;
    for (const { source } of [...step.assertions, ...step.extract]) {
      if (source === 'header') captureHeaders = true;
      else if (source === 'body' || source === 'json') captureBody = true;
    }
    const target: CheckTarget = {
      url: url.text,
      method: step.method,
      valid_http_codes: step.valid_http_codes ?? ALL_2XX,
      basic_auth_username: null,
      basic_auth_password: null,
      timeout_ms: Math.max(1, Math.floor(Math.min(left, (step.timeout ?? 60) * 1000))),
      follow_redirects: opts.followRedirects,
      headers,
      body,
      capture: { headers: captureHeaders, body: captureBody },
    };
    const stepStart = performance.now();
    const o = await opts.checker.run(target, opts.signal);
    const ms = Math.round((performance.now() - stepStart) * 1000) / 1000;
    if (ttfb === 0 && o.timings.ttfb > 0) ttfb = Math.round((stepStart - startedAt + o.timings.ttfb) * 1000) / 1000;
    lastStatus = o.status_code;
    const seen = httpProbeOutcome(o);
    if (!o.ok) return stepFailed(step.name, o.error?.class ?? 'other', o.error?.message ?? 'Failed', o.status_code, ms);
    // The body is parsed once for the step's assertions and extractions together.
    const json = lazyJson(o.body);
    const outs = evaluateAssertions(step.assertions, seen.observed, json);
    assertions.push(...outs.map((x) => (x.message ? { ...x, message: `Step "${step.name}": ${x.message}` } : x)));
    const verdict = assertionVerdict(outs);
    if (verdict.failed) return stepFailed(step.name, 'assertion', verdict.failed.message ?? 'Assertion failed', o.status_code, ms);
    if (verdict.degraded) degraded = true;
    for (const x of step.extract) {
      const v = extractValue(
        x,
        {
          ...(o.body !== undefined ? { body: o.body } : {}),
          ...(o.headers !== undefined ? { headers: o.headers } : {}),
        },
        json,
      );
      if (v === undefined)
        return stepFailed(step.name, 'assertion', `Nothing to extract for {{${x.name}}} (${x.source} ${x.path})`, o.status_code, ms);
      vars.set(x.name, v);
    }
    details.push({ name: step.name, ok: true, status_code: o.status_code, total_ms: ms, error: null });
  }
  return end(null, lastStatus !== null ? { status_code: lastStatus } : {});
}
