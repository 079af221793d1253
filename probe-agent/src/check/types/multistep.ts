import { performance } from 'node:perf_hooks';
import type { AssertionOutcome, Extraction, StepSettings } from '../../../../shared/src/contracts/checks.ts';
import { boundedMemo } from '../../../../shared/src/memo.ts';
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
import type { HopCapture } from '../hop-request.ts';
import { httpProbeOutcome, type ProbeResult } from './probe.ts';

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

/** A text cut at its `{{name}}` placeholders: literal parts at even indexes, names at odd ones. */
type Template = readonly string[];
/** The template of a text, parsed once and kept (at most 1,000 of them). */
const templateOf = boundedMemo((text: string): Template => text.split(VARIABLE));

/** `{{name}}` replaced by its value; `encode` for URLs. An unknown name is an error, not an empty string. */
export function fillTemplate(
  text: string,
  vars: ReadonlyMap<string, string>,
  encode = false,
): { ok: true; text: string } | { ok: false; name: string } {
  if (!text.includes('{{')) return { ok: true, text };
  const parts = templateOf(text);
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i]!;
    const v = vars.get(name);
    if (v === undefined) return { ok: false, name };
    out += (encode ? encodeURIComponent(v) : v) + parts[i + 1]!;
  }
  return { ok: true, text: out };
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

/** What a step's settings give every check of it, worked out once (settings are not changed in place). */
type PreparedStep = {
  capture: HopCapture;
  validCodes: number[];
  /** The headers with a value. */
  headers: ReadonlyArray<{ name: string; value: string }>;
};
const preparedSteps = new WeakMap<StepSettings, PreparedStep>();

function prepared(step: StepSettings): PreparedStep {
  let p = preparedSteps.get(step);
  if (p === undefined) {
    let headers = false;
    let body = false;
    for (const { source } of [...step.assertions, ...step.extract]) {
      if (source === 'header') headers = true;
      else if (source === 'body' || source === 'json') body = true;
    }
    p = {
      capture: { headers, body },
      validCodes: step.valid_http_codes ?? ALL_2XX,
      headers: step.headers.filter((h): h is { name: string; value: string } => h.value !== null),
    };
    preparedSteps.set(step, p);
  }
  return p;
}

type StepDetails = NonNullable<NonNullable<ProbeResult['details']>['steps']>;

/** One run of the steps: what it has seen so far, and its verdict. */
class StepsRun {
  readonly startedAt = performance.now();
  readonly vars = new Map<string, string>();
  readonly details: StepDetails = [];
  readonly assertions: AssertionOutcome[] = [];
  degraded = false;
  lastStatus: number | null = null;
  ttfb = 0;

  end(error: CheckError | null): ProbeResult {
    const total = Math.round((performance.now() - this.startedAt) * 1000) / 1000;
    const observed: ProbeResult['observed'] = error === null && this.lastStatus !== null ? { status_code: this.lastStatus } : {};
    observed.response_time = total;
    const result = {
      ok: error === null,
      status_code: this.lastStatus,
      timings: { dns: 0, connect: 0, tls: 0, ttfb: this.ttfb, total },
      error,
      observed,
      details: { steps: this.details },
    } as ProbeResult;
    if (this.assertions.length > 0) result.assertions = this.assertions;
    result.degraded = error === null && this.degraded;
    return result;
  }

  stepFailed(name: string, cls: CheckError['class'], message: string, status: number | null, ms: number): ProbeResult {
    this.details.push({ name, ok: false, status_code: status, total_ms: ms, error: message });
    return this.end({ class: cls, message: `Step "${name}": ${message}` });
  }
}

export async function runSteps(steps: readonly StepSettings[], opts: StepsOptions): Promise<ProbeResult> {
  const run = new StepsRun();
  const { vars } = run;
  const deadline = run.startedAt + opts.timeoutMs;

  for (const step of steps) {
    const left = deadline - performance.now();
    if (left <= 0) return run.stepFailed(step.name, 'timeout', `Timed out after ${opts.timeoutMs} ms (the whole check)`, null, 0);
    const { capture, validCodes, headers: stepHeaders } = prepared(step);
    const url = fillTemplate(step.url, vars, true);
    if (!url.ok) return run.stepFailed(step.name, 'other', `No value for {{${url.name}}}`, null, 0);
    const headers: Array<{ name: string; value: string }> = [];
    for (const h of stepHeaders) {
      const v = fillTemplate(h.value, vars);
      if (!v.ok) return run.stepFailed(step.name, 'other', `No value for {{${v.name}}}`, null, 0);
      const value = headerSafe(v.text);
      headers.push(value === h.value ? h : { name: h.name, value });
    }
    let body: string | null = null;
    if (step.body !== null && step.body !== '') {
      const b = fillTemplate(step.body, vars);
      if (!b.ok) return run.stepFailed(step.name, 'other', `No value for {{${b.name}}}`, null, 0);
      body = b.text;
    }
    const target: CheckTarget = {
      url: url.text,
      method: step.method,
      valid_http_codes: validCodes,
      basic_auth_username: null,
      basic_auth_password: null,
      timeout_ms: Math.max(1, Math.floor(Math.min(left, (step.timeout ?? 60) * 1000))),
      follow_redirects: opts.followRedirects,
      headers,
      body,
      capture,
    };
    const stepStart = performance.now();
    const o = await opts.checker.run(target, opts.signal);
    const ms = Math.round((performance.now() - stepStart) * 1000) / 1000;
    if (run.ttfb === 0 && o.timings.ttfb > 0) run.ttfb = Math.round((stepStart - run.startedAt + o.timings.ttfb) * 1000) / 1000;
    run.lastStatus = o.status_code;
    if (!o.ok) return run.stepFailed(step.name, o.error?.class ?? 'other', o.error?.message ?? 'Failed', o.status_code, ms);
    // The body is parsed once for the step's assertions and extractions together.
    const json = lazyJson(o.body);
    if (step.assertions.length > 0) {
      const outs = evaluateAssertions(step.assertions, httpProbeOutcome(o).observed, json);
      for (const x of outs) run.assertions.push(x.message ? { ...x, message: `Step "${step.name}": ${x.message}` } : x);
      const verdict = assertionVerdict(outs);
      if (verdict.failed) return run.stepFailed(step.name, 'assertion', verdict.failed.message ?? 'Assertion failed', o.status_code, ms);
      if (verdict.degraded) run.degraded = true;
    }
    for (const x of step.extract) {
      const v = extractValue(x, o, json);
      if (v === undefined)
        return run.stepFailed(step.name, 'assertion', `Nothing to extract for {{${x.name}}} (${x.source} ${x.path})`, o.status_code, ms);
      vars.set(x.name, v);
    }
    run.details.push({ name: step.name, ok: true, status_code: o.status_code, total_ms: ms, error: null });
  }
  return run.end(null);
}
