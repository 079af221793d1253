import { JSONPath } from 'jsonpath-plus';
import { RE2JS } from 're2js';
import { boundedMemo } from '../memo.ts';
import {
  MAX_PATTERN_LENGTH,
  numericOperators,
  numericSources,
  pathSources,
  patternOperators,
  presenceOperators,
  sourcesOf,
  type Assertion,
  type AssertionOutcome,
  type MonitorType,
} from '../contracts/checks.ts';

/**
 * Assertions over what a check observed, as pure functions (docs/adr/0034-check-types-and-assertions.md).
 *
 * Patterns run on RE2 (re2js): matching takes time linear in the text, so no pattern, however
 * written, can stall a probe agent (no catastrophic backtracking); patterns are capped at
 * MAX_PATTERN_LENGTH and texts at the agent's body limit. JSON paths are JSONPath without script
 * evaluation (filters like `?(@.x)` are refused): a path is data, never code.
 */

/** What the assertions read: the observed fields of a check (probe-agent ProbeOutcome.observed). */
export type AssertionInputs = {
  /** Milliseconds the whole check took (ICMP: the average round trip). */
  response_time?: number;
  status_code?: number;
  /** Text received: an HTTP body, the bytes a TCP server sent, a WebSocket message (cut at the size limit). */
  body?: string;
  /** Response headers, names in lower case. */
  headers?: Record<string, string>;
  /** Days the presented certificate has left, with a fraction. */
  certificate_days?: number;
  /** Answer values of a DNS query (A: addresses, MX: "10 mail.example.com", TXT: the joined strings...). */
  dns_answers?: string[];
  /** Percent of ICMP echo requests without a reply. */
  packet_loss?: number;
  /** grpc.health.v1 status name (SERVING, NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN). */
  grpc_status?: string;
};

type Value = string | number | boolean | null | undefined | unknown[] | Record<string, unknown>;

const OBSERVED_CHARS = 200;

/** A problem with an assertion, or undefined when it can be evaluated: `field` is relative to the assertion. */
export function assertionProblem(a: Assertion, type: MonitorType): { field: string; message: string } | undefined {
  if (!sourcesOf[type].includes(a.source)) {
    return { field: 'source', message: `A ${type} monitor cannot assert on ${a.source}; it takes ${sourcesOf[type].join(', ')}.` };
  }
  if (pathSources.includes(a.source) && a.path === undefined) {
    return {
      field: 'path',
      message: `An assertion on ${a.source} needs a path (${a.source === 'json' ? 'a JSONPath like $.status' : 'a header name'}).`,
    };
  }
  if (a.source === 'json' && a.path !== undefined) {
    const problem = jsonPathProblem(a.path);
    if (problem) return { field: 'path', message: problem };
  }
  if (a.source === 'header' && a.path !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(a.path)) {
    return { field: 'path', message: "A header name is letters, digits and !#$%&'*+.^_`|~-." };
  }
  const hasTarget = a.target !== undefined && a.target !== null;
  if (presenceOperators.includes(a.operator)) {
    if (hasTarget) return { field: 'target', message: `The ${a.operator} operator takes no target.` };
    return undefined;
  }
  if (!hasTarget) return { field: 'target', message: `The ${a.operator} operator needs a target.` };
  if (numericOperators.includes(a.operator) && typeof a.target !== 'number') {
    return { field: 'target', message: `The ${a.operator} operator compares with a number.` };
  }
  if (
    numericSources.includes(a.source) &&
    (a.operator === 'contains' || a.operator === 'not_contains' || patternOperators.includes(a.operator))
  ) {
    return { field: 'operator', message: `${a.source} is a number: use equals, not_equals, in or a comparison.` };
  }
  if (a.operator === 'in' && !Array.isArray(a.target)) return { field: 'target', message: 'The in operator takes a list of values.' };
  if (a.operator !== 'in' && Array.isArray(a.target)) return { field: 'target', message: 'Only the in operator takes a list.' };
  if (patternOperators.includes(a.operator)) {
    if (typeof a.target !== 'string') return { field: 'target', message: 'A pattern is a string.' };
    const problem = patternProblem(a.target);
    if (problem) return { field: 'target', message: problem };
  }
  return undefined;
}

export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `A pattern is at most ${MAX_PATTERN_LENGTH} characters.`;
  try {
    compiledPattern(pattern);
    return undefined;
  } catch (err) {
    return `Not a valid pattern (RE2 syntax): ${(err as Error).message.split('\n')[0]?.slice(0, 120)}`;
  }
}

export function jsonPathProblem(path: string): string | undefined {
  if (!path.startsWith('$')) return 'A JSONPath starts with $ (for example $.status or $.items[0].id).';
  if (/[?(]/.test(path)) return 'Filter and script expressions (?(...), (...)) are not supported in a JSONPath.';
  try {
    JSONPath({ path, json: {}, eval: false, wrap: true });
    return undefined;
  } catch (err) {
    return `Not a valid JSONPath: ${(err as Error).message.slice(0, 120)}`;
  }
}

// A path of names and indexes only ($.data.items[0].id), the usual kind, is read by walking it:
// what JSONPath answers for it (an own property of a value that is not empty, one step after the
// other), without building the engine's evaluation for every check. Any other path goes to it.
const SIMPLE_PATH = /^\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+$/;
const simplePathKeys = boundedMemo((path: string): readonly string[] | null =>
  SIMPLE_PATH.test(path) ? [...path.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)].map((m) => m[1] ?? m[2]!) : null,
);

/** The values a JSONPath finds in a parsed document, in order (jsonpath-plus, with the walk above for simple paths). */
export function readJsonPath(path: string, doc: unknown): unknown[] {
  const keys = simplePathKeys(path);
  if (keys === null || doc === null || typeof doc !== 'object') {
    return JSONPath({ path, json: doc as object, eval: false, wrap: true }) as unknown[];
  }
  let at: unknown = doc;
  for (const key of keys) {
    if (!at || !Object.hasOwn(at as object, key)) return [];
    at = (at as Record<string, unknown>)[key];
  }
  return [at];
}

/** Whether an RE2 pattern (one patternProblem accepts) matches somewhere in `text`. */
export function patternFinds(pattern: string, text: string): boolean {
  return compiledPattern(pattern).matcher(text).find();
}

/** An RE2 pattern compiled once and kept (at most 1,000 of them). */
export const compiledPattern: (pattern: string) => RE2JS = boundedMemo((pattern: string) => RE2JS.compile(pattern));

const cut = (s: string) => (s.length > OBSERVED_CHARS ? `${s.slice(0, OBSERVED_CHARS - 1)}…` : s);

function shown(v: Value): string | number | boolean | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return cut(v);
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  return cut(JSON.stringify(v));
}

const text = (v: Value): string =>
  typeof v === 'string' ? v : v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

function same(v: Value, target: unknown): boolean {
  if (typeof v === 'number' && typeof target === 'number') return v === target;
  if (typeof v === 'number' && typeof target === 'string') return target.trim() !== '' && Number(target) === v;
  if (typeof v === 'string' && typeof target === 'number') return v.trim() !== '' && Number(v) === target;
  return text(v) === text(target as Value);
}

function asNumber(v: Value): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The value an assertion reads from the observations; `many` for sources with several values (DNS answers). */
function read(a: Assertion, o: AssertionInputs, json: LazyJson): { value: Value; many?: string[]; why?: string } {
  switch (a.source) {
    case 'status_code':
      return { value: o.status_code };
    case 'response_time':
      return { value: o.response_time };
    case 'certificate_days':
      return { value: o.certificate_days === undefined ? undefined : Math.floor(o.certificate_days * 10) / 10 };
    case 'packet_loss':
      return { value: o.packet_loss };
    case 'grpc_status':
      return { value: o.grpc_status };
    case 'body':
      return { value: o.body };
    case 'header':
      return { value: o.headers?.[(a.path ?? '').toLowerCase()] };
    case 'dns_answer':
      return { value: o.dns_answers?.join(', '), ...(o.dns_answers ? { many: o.dns_answers } : {}) };
    case 'json': {
      const doc = json();
      if (!doc.ok) return { value: undefined, why: 'The body is not JSON' };
      const found = readJsonPath(a.path ?? '$', doc.value);
      return { value: found.length === 0 ? undefined : (found[0] as Value) };
    }
  }
}

/** Evaluates one assertion on a value read. */
function holds(a: Assertion, value: Value, many: string[] | undefined): boolean {
  const t = a.target;
  switch (a.operator) {
    case 'exists':
      return value !== undefined && value !== null && !(many && many.length === 0);
    case 'not_exists':
      return value === undefined || value === null || (many !== undefined && many.length === 0);
    case 'equals':
      return many ? many.length === 1 && same(many[0], t) : same(value, t);
    case 'not_equals':
      return !(many ? many.length === 1 && same(many[0], t) : same(value, t));
    case 'contains':
      if (many) return many.some((m) => same(m, t));
      if (Array.isArray(value)) return value.some((m) => same(m as Value, t));
      return text(value).includes(text(t as Value));
    case 'not_contains':
      if (many) return !many.some((m) => same(m, t));
      if (Array.isArray(value)) return !value.some((m) => same(m as Value, t));
      return !text(value).includes(text(t as Value));
    case 'matches':
      return many ? many.some((m) => compiledPattern(String(t)).matcher(m).find()) : compiledPattern(String(t)).matcher(text(value)).find();
    case 'not_matches':
      return many
        ? !many.some((m) => compiledPattern(String(t)).matcher(m).find())
        : !compiledPattern(String(t)).matcher(text(value)).find();
    case 'in':
      return Array.isArray(t) && (many ? many.length > 0 && many.every((m) => t.some((x) => same(m, x))) : t.some((x) => same(value, x)));
    case 'less_than':
    case 'less_or_equal':
    case 'greater_than':
    case 'greater_or_equal': {
      const n = asNumber(value);
      if (n === undefined || typeof t !== 'number') return false;
      if (a.operator === 'less_than') return n < t;
      if (a.operator === 'less_or_equal') return n <= t;
      if (a.operator === 'greater_than') return n > t;
      return n >= t;
    }
  }
}

const describeTarget = (a: Assertion) => (a.target === undefined ? '' : ` ${JSON.stringify(a.target)}`);

/** "json $.status equals \"ok\"": how a message names an assertion. */
export function assertionLabel(a: Pick<Assertion, 'source' | 'path' | 'operator' | 'target'>): string {
  return `${a.source}${a.path ? ` ${a.path}` : ''} ${a.operator.replace(/_/g, ' ')}${describeTarget(a as Assertion)}`;
}

/** Every assertion's outcome, in order. The body is parsed as JSON once, and only when a json assertion asks. */
/** A body parsed as JSON at most once, when first asked for. */
export type LazyJson = () => { ok: true; value: unknown } | { ok: false };
export function lazyJson(body: string | undefined): LazyJson {
  let parsed: { ok: true; value: unknown } | { ok: false } | undefined;
  return () => {
    if (parsed === undefined) {
      try {
        parsed = { ok: true, value: JSON.parse(body ?? '') as unknown };
      } catch {
        parsed = { ok: false };
      }
    }
    return parsed;
  };
}

/** Each assertion's outcome; `json` is the body parsed (shared with a caller that reads it too). */
export function evaluateAssertions(
  assertions: readonly Assertion[],
  observed: AssertionInputs,
  json: LazyJson = lazyJson(observed.body),
): AssertionOutcome[] {
  return assertions.map((a) => {
    // Built field by field in the documented order (no spreads: this runs for every check).
    const out = { source: a.source } as AssertionOutcome;
    if (a.path !== undefined) out.path = a.path;
    out.operator = a.operator;
    if (a.target !== undefined) out.target = a.target;
    out.severity = a.severity;
    try {
      const { value, many, why } = read(a, observed, json);
      out.passed = holds(a, value, many);
      out.observed = shown(value);
      if (!out.passed) {
        out.message =
          why ??
          (value === undefined && a.operator !== 'not_exists'
            ? `Nothing to read for ${assertionLabel(a)}`
            : `Expected ${assertionLabel(a)}, got ${JSON.stringify(out.observed)}`);
      }
    } catch (err) {
      out.passed = false;
      out.observed = null;
      out.message = `Could not evaluate: ${(err as Error).message.slice(0, 120)}`;
    }
    return out;
  });
}

/** The verdict of the outcomes: the first failing `down` assertion (the check fails), else whether a `degraded` one failed. */
export function assertionVerdict(outcomes: readonly AssertionOutcome[]): {
  failed: AssertionOutcome | null;
  degraded: AssertionOutcome | null;
} {
  return {
    failed: outcomes.find((o) => !o.passed && o.severity === 'down') ?? null,
    degraded: outcomes.find((o) => !o.passed && o.severity === 'degraded') ?? null,
  };
}
