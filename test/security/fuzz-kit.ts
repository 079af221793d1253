import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { App } from '../../control-plane/src/runtime/app.ts';
import type { Answers } from './routes.ts';

/**
 * Generated inputs per route and kind (bodies, queries, header sets), after the fixed examples.
 * Each run draws a new seed (printed with a failure, to replay it), so runs add to what was tried;
 * `FUZZ_RUNS` asks for more in one run.
 */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

export const junkValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom(
    '',
    '0',
    '-1',
    '1.5',
    'null',
    'true',
    '[]',
    '{}',
    '%00',
    '\u0000',
    'a'.repeat(5000),
    '00000000-0000-4000-8000-000000000000',
    '1e999',
    '../../etc/passwd',
    '<script>x</script>',
    '__proto__',
  ),
);

export const junkJson = fc.oneof(
  fc.anything({ maxDepth: 3, withNullPrototype: true, withBigInt: false }),
  fc.dictionary(
    fc.constantFrom(
      'name',
      'url',
      'project_id',
      'valid_http_codes',
      '_method',
      'active',
      'interval',
      'timeout',
      'grace_period',
      'cron_schedule',
      'next_ping_at',
      'regions',
      'integration_ids',
      'type',
      'config',
      'message',
      'token',
      '__proto__',
      'constructor',
    ),
    fc.anything({ maxDepth: 2 }),
  ),
);

/**
 * Names that break a lookup keyed by input (`value in table`, `form[name] = value`): every known
 * field gets each of them, and each is tried as a field name, on every run before the random cases,
 * so finding such a bug does not depend on the seed.
 */
export const sharpValues = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', '-1', '\u0000'];

/** Each known field set to each sharp value, then each sharp name as a field of its own. */
export const sharpFields = (fields: string[]): Record<string, string>[] => [
  ...fields.flatMap((f) => sharpValues.map((v) => ({ [f]: v }))),
  ...sharpValues.filter((v) => v !== '').map((v) => ({ [v]: 'x' })),
];

/** The same as JSON bodies, where a `__proto__` key can also hold an object or a list. */
export const sharpJson: unknown[] = [
  ...sharpValues.filter((v) => v !== '').flatMap((v) => [{ [v]: 'x' }, { [v]: ['x'] }, { [v]: { name: 'x', url: 'http://x.example' } }]),
  JSON.parse('{"__proto__": {"name": "x"}, "name": "__proto__", "config": {"__proto__": {"url": "http://x.example"}}}'),
];

/**
 * JSON nested far past the depth limit (arrays, objects, and an MCP call whose arguments nest),
 * and a form whose field name nests with brackets: tried on every route that takes a body. Deep
 * enough to overflow a recursive walk even once the runtime has optimised it (smaller frames),
 * within the body limits.
 */
const deep = 100_000;
export const deepJsonTexts: string[] = [
  '['.repeat(deep) + ']'.repeat(deep),
  '{"a":'.repeat(deep) + '1' + '}'.repeat(deep),
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_monitors","arguments":{"x":${'['.repeat(deep)}${']'.repeat(deep)}}}}`,
];
export const deepFormBody = `message=x&a${'[b]'.repeat(deep)}=x`;

/** A header value Node lets through (visible ASCII and spaces). */
export const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });

export const contentTypes = fc.oneof(
  headerValue,
  fc.constantFrom(
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'multipart/form-data',
    'application/json; charset=latin1',
    'text/html',
    'application/octet-stream',
  ),
);

/** A path parameter: a UUID, a real id now and then, or anything at all (encoded). */
export const idArb = (...real: string[]) =>
  fc.oneof(fc.uuid(), fc.string({ minLength: 1 }).map(encodeURIComponent), ...(real.length > 0 ? [fc.constantFrom(...real)] : []));

/** Form bodies: known field names and anything else, with junk values, sometimes repeated. */
export const formBody = (fields: string[]) =>
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...fields), fc.string()), junkValue), { maxLength: 8 })
    .map((pairs) => new URLSearchParams(pairs).toString());

export type { Answers };

/**
 * Whatever came in: no 5xx, and an error in the route's own kind of answer: JSON with a
 * `message` for the API, an HTML page for the dashboard, short plain text for ping URLs and files.
 */
export async function expectSane(app: App, opts: InjectOptions, answers: Answers, what: string): Promise<LightMyRequestResponse> {
  const res = await app.inject(opts);
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
  if (res.statusCode >= 400) assertErrorShape(res, answers, what);
  return res;
}

export function assertErrorShape(res: LightMyRequestResponse, answers: Answers, what: string): void {
  const type = String(res.headers['content-type'] ?? '');
  const shape = type.startsWith('application/json')
    ? 'json'
    : type.startsWith('text/html')
      ? 'html'
      : type.startsWith('text/plain')
        ? 'text'
        : type;
  // Refused before the route's own handler (a content type or a NUL it cannot take): the error
  // of the scope it lives in, the API's JSON, or a page for files the dashboard serves.
  const allowed = { json: ['json'], html: ['html'], text: ['text', 'json'], file: ['text', 'json', 'html'] }[answers];
  assert.ok(allowed.includes(shape), `${what} -> ${res.statusCode} ${type}: ${res.body.slice(0, 100)}`);
  if (shape === 'json') {
    const body = JSON.parse(res.body) as { message?: unknown };
    assert.equal(typeof body.message, 'string', `${what}: ${res.body.slice(0, 200)}`);
  } else if (shape === 'html') {
    assert.equal(type, 'text/html; charset=utf-8', `${what} -> ${res.statusCode} ${type}`);
    if (res.body !== '') assert.match(res.body, /^<!doctype html>/i, `${what}: ${res.body.slice(0, 200)}`);
  } else {
    assert.ok(res.body.length < 200, `${what}: ${res.body.slice(0, 200)}`);
  }
}

export const fill = (url: string, id: string) => url.replace(/:[A-Za-z]+/g, id);
