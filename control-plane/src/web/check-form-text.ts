import {
  assertionOperators,
  assertionSources,
  numericOperators,
  numericSources,
  pathSources,
  presenceOperators,
  type AssertionInput,
  type AssertionOperator,
  type AssertionSource,
  type Extraction,
  type HeaderEntry,
} from '../../../shared/src/contracts/checks.ts';

/**
 * The dashboard's text forms of a check's lists (docs/checks.md, "In the dashboard"): an
 * assertion's target as typed, and the lines a multi-step check's step takes for its headers,
 * extractions and assertions. Each parser is the inverse of its `...Text` function, so a stored
 * monitor shown on the edit form comes back unchanged when saved.
 */

export type AssertionTarget = AssertionInput['target'];

const numberPattern = /^-?\d+(\.\d+)?$/;

/** An assertion's target as typed: a number where a number is compared, a comma-separated list for `in`. */
export function parseTarget(
  raw: string,
  source: AssertionSource,
  operator: AssertionOperator,
): { target: AssertionTarget; problem?: string } {
  const typed = raw.trim();
  const numeric = numericSources.includes(source) || numericOperators.includes(operator);
  if (typed === '') return { target: undefined };
  if (operator === 'in') {
    const items = typed
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    const bad = numericSources.includes(source) ? items.find((item) => !numberPattern.test(item)) : undefined;
    if (bad !== undefined) return { target: items, problem: `${source} is a number: “${bad}” is not one.` };
    return { target: items.map((item) => (numericSources.includes(source) ? Number(item) : item)) };
  }
  if (presenceOperators.includes(operator) || !numeric) return { target: typed };
  if (!numberPattern.test(typed)) return { target: typed, problem: 'A number, such as 200 or 1.5.' };
  return { target: Number(typed) };
}

/** A target as the form shows it (the inverse of parseTarget). */
export function targetText(target: AssertionTarget): string {
  if (target === undefined || target === null) return '';
  return Array.isArray(target) ? target.join(', ') : String(target);
}

/** A list read from lines: its items, the line (1-based) each came from, and the problems by line. */
export interface Lines<T> {
  items: T[];
  lines: number[];
  problems: string[];
}

function parseLines<T>(text: string, parseLine: (line: string) => T | string): Lines<T> {
  const out: Lines<T> = { items: [], lines: [], problems: [] };
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') out.problems.push(`Line ${i + 1}: ${parsed}`);
    else {
      out.items.push(parsed);
      out.lines.push(i + 1);
    }
  });
  return out;
}

/**
 * A step's headers, one `Name: value` a line. A name alone (no colon) keeps the value stored for
 * that header: it is how the edit form shows a stored one, whose value is never shown.
 */
export function parseHeaderLines(text: string): Lines<HeaderEntry> {
  return parseLines(text, (line) => {
    const colon = line.indexOf(':');
    const name = (colon < 0 ? line : line.slice(0, colon)).trim();
    if (name === '') return 'write a header as Name: value.';
    return { name, value: colon < 0 ? null : line.slice(colon + 1).trim() };
  });
}

export function headerLinesText(headers: readonly HeaderEntry[]): string {
  return headers.map((h) => (h.value === null ? h.name : `${h.name}: ${h.value}`)).join('\n');
}

const extractionLine = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(json|header|body)\s+(.+)$/;

/** `token = json $.token`, `id = header x-id`, `n = body /id=(\d+)/` (the slashes around a pattern are optional). */
export function parseExtractions(text: string): Lines<Extraction> {
  return parseLines(text, (line) => {
    const m = extractionLine.exec(line);
    if (!m) return 'write name = json $.path, name = header Header-Name or name = body /pattern/.';
    const [, name, source, rest] = m as unknown as [string, string, Extraction['source'], string];
    const path = source === 'body' && rest.length > 1 && rest.startsWith('/') && rest.endsWith('/') ? rest.slice(1, -1) : rest.trim();
    return { name, source, path };
  });
}

export function extractionsText(list: readonly Extraction[]): string {
  return list.map((x) => `${x.name} = ${x.source} ${x.source === 'body' ? `/${x.path}/` : x.path}`).join('\n');
}

export const isSource = (word: string): word is AssertionSource => (assertionSources as readonly string[]).includes(word);
export const isOperator = (word: string): word is AssertionOperator => (assertionOperators as readonly string[]).includes(word);

/**
 * A step's assertions, one a line: `status_code equals 201`, `json $.count greater_than 2`,
 * `header content-type contains json`, `degraded: response_time less_than 800`. A path is one
 * word; the target is the rest of the line, read as the assertion editor reads it.
 */
export function parseAssertionLines(text: string): Lines<AssertionInput> {
  return parseLines(text, (line) => {
    const degraded = /^degraded:\s*/i.exec(line);
    const words = line.slice(degraded ? degraded[0].length : 0).split(/\s+/);
    const source = words.shift() ?? '';
    if (!isSource(source)) return `“${source}” is not something to check: use ${assertionSources.join(', ')}.`;
    const path = pathSources.includes(source) ? words.shift() : undefined;
    const operator = words.shift() ?? '';
    if (!isOperator(operator)) return `“${operator}” is not an operator: use ${assertionOperators.join(', ')}.`;
    const { target, problem } = parseTarget(words.join(' '), source, operator);
    if (problem) return problem;
    return {
      source,
      ...(path !== undefined ? { path } : {}),
      operator,
      ...(target !== undefined ? { target } : {}),
      severity: degraded ? 'degraded' : 'down',
    };
  });
}

export function assertionLinesText(list: readonly AssertionInput[]): string {
  return list
    .map((a) =>
      [a.severity === 'degraded' ? 'degraded:' : '', a.source, a.path ?? '', a.operator, targetText(a.target)].filter(Boolean).join(' '),
    )
    .join('\n');
}
