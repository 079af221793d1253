import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findNul } from '../../control-plane/src/platform/http/nul-guard.ts';
import { jsonTextTooDeep, MAX_JSON_DEPTH, valueTooDeep } from '../../shared/src/json-depth.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { csrfOf, webClient } from '../web/client.ts';

/** `levels` arrays inside each other, with `inner` in the middle. */
const nestedArrays = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);
/** `levels` objects inside each other (`{"a":{"a":...}}`), with `inner` as the innermost value. */
const nestedObjects = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);
/** The body found to overflow the stack: 40 KB, 20,000 levels. */
const hostile = nestedArrays(20_000);
const limitNamed = new RegExp(`nested too deeply: at most ${MAX_JSON_DEPTH} levels`);

describe('measuring the depth of JSON', () => {
  const rows: [string, string, boolean][] = [
    ['a scalar', '"x"', false],
    ['the limit in arrays', nestedArrays(MAX_JSON_DEPTH), false],
    ['one past the limit in arrays', nestedArrays(MAX_JSON_DEPTH + 1), true],
    ['the limit in objects', nestedObjects(MAX_JSON_DEPTH), false],
    ['one past the limit in objects', nestedObjects(MAX_JSON_DEPTH + 1), true],
    ['siblings, each at the limit', `[${nestedArrays(MAX_JSON_DEPTH - 1)},${nestedArrays(MAX_JSON_DEPTH - 1)}]`, false],
    ['brackets inside a string', JSON.stringify({ a: '['.repeat(1000) }), false],
    ['an escaped quote before brackets in a string', JSON.stringify({ a: `\\"${'{'.repeat(1000)}` }), false],
    ['the hostile body', hostile, true],
  ];
  for (const [what, text, deep] of rows) {
    it(`text: ${what} -> ${deep ? 'too deep' : 'accepted'}`, () => {
      assert.equal(jsonTextTooDeep(text), deep);
    });
    it(`parsed value: ${what} -> ${deep ? 'too deep' : 'accepted'}`, () => {
      assert.equal(valueTooDeep(JSON.parse(text)), deep);
    });
  }
});

describe('finding NUL characters in nested input', () => {
  it('walks a value of any depth without exhausting the stack, and names the path of the hit', () => {
    const value = JSON.parse(nestedObjects(200_000, '["ok","bad\\u0000"]')) as unknown;
    const path = findNul(value);
    assert.equal(path?.length, 200_001);
    assert.deepEqual(path?.slice(-3), ['a', 'a', '1']);
    assert.ok(path?.slice(0, -1).every((k) => k === 'a'));
  });

  it('names the field a NUL is in, and a NUL in a key', () => {
    assert.deepEqual(findNul({ name: 'x', config: { headers: ['a', 'b\u0000'] } }), ['config', 'headers', '1']);
    assert.deepEqual(findNul({ config: { 'k\u0000': 'v' } }), ['config', 'k\\0']);
    assert.deepEqual(findNul('a\u0000'), []);
    assert.equal(findNul({ a: [1, true, null, 'x'] }), undefined);
  });
});

describe('deeply nested bodies on the public and API entry points', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let triggerId: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    triggerId = (await apiClient(cp.url, ada.token)('POST', '/triggers', { project_id: ada.project_id, name: 't', default_message: 'x' }))
      .body.data.id;
  });
  after(() => cp.stop());

  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(cp.url + path, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  /** The process still answers: its liveness probe and an authenticated read. */
  const stillServing = async () => {
    assert.equal((await fetch(`${cp.url}/healthz`)).status, 200);
    assert.equal((await apiClient(cp.url, ada.token)('GET', '/monitors')).status, 200);
  };

  it('refuses the hostile body on the notify URL with 400 naming the limit', async () => {
    const res = await post(`/api/notify/${triggerId}`, hostile);
    assert.equal(res.status, 400, res.text);
    assert.match(JSON.parse(res.text).message, limitNamed);
    await stillServing();
  });

  it('refuses the hostile body on the dashboard sign-in with a 400 page naming the limit', async () => {
    const res = await post('/app/sign-in', hostile);
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.equal(res.type, 'text/html; charset=utf-8');
    assert.match(res.text, limitNamed);
    await stillServing();
  });

  for (const [path, token] of [
    ['/monitors', 'token'],
    ['/mcp', 'mcpToken'],
  ] as const) {
    it(`answers the hostile body on ${path} with 401 without a token, and 400 naming the limit with one`, async () => {
      const anonymous = await post(path, hostile);
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal(JSON.parse(anonymous.text).message, 'Unauthorized');
      const signed = await post(path, hostile, { authorization: `Bearer ${ada[token]}` });
      assert.equal(signed.status, 400, signed.text);
      assert.match(JSON.parse(signed.text).message, limitNamed);
      await stillServing();
    });
  }

  it('refuses nested objects as well as arrays, and accepts a body at the limit', async () => {
    const deepObject = await post('/monitors', nestedObjects(MAX_JSON_DEPTH + 1), { authorization: ada.auth });
    assert.equal(deepObject.status, 400, deepObject.text);
    assert.match(JSON.parse(deepObject.text).message, limitNamed);
    // The message object is one level, `extra` holds the other 63: read and fired as usual.
    const atLimit = await post(`/api/notify/${triggerId}`, `{"message":"at the limit","extra":${nestedArrays(MAX_JSON_DEPTH - 1)}}`);
    assert.equal(atLimit.status, 202, atLimit.text);
  });

  it('reads form bodies flat, so bracketed field names cannot nest', async () => {
    const web = webClient(cp.url);
    const page = await web.get('/app/sign-in');
    const deepName = `a${'[b]'.repeat(20_000)}`;
    const signIn = await web.post('/app/sign-in', { _csrf: csrfOf(page.text), email: ada.email, password: ada.password, [deepName]: 'x' });
    assert.equal(signIn.status, 303, signIn.text.slice(0, 300));
    const notify = await fetch(`${cp.url}/api/notify/${triggerId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ message: 'from a form', [deepName]: 'x' }).toString(),
    });
    assert.equal(notify.status, 202, await notify.text());
    await stillServing();
  });
});
