import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StepSettings } from '../../shared/src/contracts/checks.ts';
import { createChecker, type Checker } from '../../probe-agent/src/check/check.ts';
import { extractValue, fillTemplate, runSteps } from '../../probe-agent/src/check/types/multistep.ts';

describe('multi-step: templates', () => {
  const vars = new Map([
    ['token', 'a b/c'],
    ['id', '42'],
  ]);
  const rows: Array<[string, boolean, ReturnType<typeof fillTemplate>]> = [
    ['/items', false, { ok: true, text: '/items' }],
    ['/items/{{id}}', false, { ok: true, text: '/items/42' }],
    ['/items/{{ id }}?t={{token}}', true, { ok: true, text: '/items/42?t=a%20b%2Fc' }],
    ['Bearer {{token}}', false, { ok: true, text: 'Bearer a b/c' }],
    ['{{missing}} and {{id}}', false, { ok: false, name: 'missing' }],
    ['{{ }} {id} {{1x}}', false, { ok: true, text: '{{ }} {id} {{1x}}' }],
    ['{{id}}{{id}}', false, { ok: true, text: '4242' }],
  ];
  for (const [text, encode, expected] of rows) {
    it(`${JSON.stringify(text)}${encode ? ' (URL)' : ''}`, () => assert.deepEqual(fillTemplate(text, vars, encode), expected));
  }
});

describe('multi-step: extraction', () => {
  const response = {
    body: '{"token":"t-1","user":{"id":7,"roles":["a","b"]},"none":null,"n":0}',
    headers: { 'x-request-id': 'r-9', location: '/next' },
  };
  const rows: Array<[StepSettings['extract'][number], string | undefined]> = [
    [{ name: 'v', source: 'json', path: '$.token' }, 't-1'],
    [{ name: 'v', source: 'json', path: '$.user.id' }, '7'],
    [{ name: 'v', source: 'json', path: '$.user.roles' }, '["a","b"]'],
    [{ name: 'v', source: 'json', path: '$.user.roles[1]' }, 'b'],
    [{ name: 'v', source: 'json', path: '$.n' }, '0'],
    [{ name: 'v', source: 'json', path: '$.none' }, undefined],
    [{ name: 'v', source: 'json', path: '$.missing' }, undefined],
    [{ name: 'v', source: 'json', path: '$..id' }, '7'],
    [{ name: 'v', source: 'header', path: 'X-Request-Id' }, 'r-9'],
    [{ name: 'v', source: 'header', path: 'x-absent' }, undefined],
    [{ name: 'v', source: 'body', path: '"token":"([^"]+)"' }, 't-1'],
    [{ name: 'v', source: 'body', path: 't-\\d' }, 't-1'],
    [{ name: 'v', source: 'body', path: 'nowhere' }, undefined],
  ];
  for (const [x, expected] of rows) {
    it(`${x.source} ${x.path} → ${String(expected)}`, () => assert.equal(extractValue(x, response), expected));
  }
  it('a body that is not JSON extracts nothing by JSON path', () => {
    assert.equal(extractValue({ name: 'v', source: 'json', path: '$.a' }, { body: 'not json' }), undefined);
  });
});

describe('multi-step: runs against a local HTTP server', () => {
  let server: Server;
  let base: string;
  let checker: Checker;
  const seen: Array<{ url: string; auth: string | undefined; body: string }> = [];

  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => resolve(body));
    });

  before(async () => {
    server = createServer(async (req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization, body: await read(req) });
      if (req.url === '/login') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-session': 's-5' });
        return res.end(JSON.stringify({ token: 'tok 1', user: { id: 3 } }));
      }
      if (req.url?.startsWith('/users/3')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('order=o-77; state=open');
      }
      if (req.url?.startsWith('/orders/o-77')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"state":"open"}');
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    checker = createChecker({ userAgent: 'test', blockPrivateTargets: false });
  });
  after(async () => {
    await checker.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const run = (steps: unknown[], timeoutMs = 5_000) =>
    runSteps(
      steps.map((s) => StepSettings.parse(s)),
      { checker, timeoutMs, followRedirects: true, signal: new AbortController().signal },
    );

  it('carries JSON, header and regex extractions into later URLs, headers and bodies', async () => {
    seen.length = 0;
    const r = await run([
      {
        name: 'login',
        url: `${base}/login`,
        method: 'POST',
        body: '{"user":"ada"}',
        extract: [
          { name: 'token', source: 'json', path: '$.token' },
          { name: 'uid', source: 'json', path: '$.user.id' },
          { name: 'session', source: 'header', path: 'X-Session' },
        ],
      },
      {
        name: 'user',
        url: `${base}/users/{{uid}}?t={{token}}`,
        headers: [{ name: 'Authorization', value: 'Bearer {{token}} {{session}}' }],
        extract: [{ name: 'order', source: 'body', path: 'order=([a-z0-9-]+)' }],
      },
      {
        name: 'order',
        url: `${base}/orders/{{order}}`,
        method: 'POST',
        body: 'seen {{order}}',
        assertions: [{ source: 'json', path: '$.state', operator: 'equals', target: 'open' }],
      },
    ]);
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/login', '/users/3?t=tok%201', '/orders/o-77'],
    );
    assert.equal(seen[1]!.auth, 'Bearer tok 1 s-5');
    assert.equal(seen[2]!.body, 'seen o-77');
    assert.deepEqual(
      r.details?.steps?.map((s) => [s.name, s.ok]),
      [
        ['login', true],
        ['user', true],
        ['order', true],
      ],
    );
    assert.equal(r.assertions?.[0]?.passed, true);
  });

  it('the first failing step ends the check and is its evidence', async () => {
    seen.length = 0;
    const r = await run([
      { name: 'login', url: `${base}/login`, extract: [{ name: 'uid', source: 'json', path: '$.user.id' }] },
      { name: 'missing', url: `${base}/nothing/{{uid}}` },
      { name: 'never', url: `${base}/login` },
    ]);
    assert.equal(r.ok, false);
    assert.equal(r.error?.class, 'status');
    assert.match(r.error?.message ?? '', /^Step "missing": /);
    assert.deepEqual(
      r.details?.steps?.map((s) => [s.name, s.ok]),
      [
        ['login', true],
        ['missing', false],
      ],
    );
    assert.equal(seen.length, 2, 'the step after the failing one is not run');
  });

  it('fails a step whose extraction finds nothing, naming the variable', async () => {
    const r = await run([{ name: 'login', url: `${base}/login`, extract: [{ name: 'x', source: 'json', path: '$.absent' }] }]);
    assert.equal(r.ok, false);
    assert.equal(r.error?.class, 'assertion');
    assert.match(r.error?.message ?? '', /Nothing to extract for \{\{x\}\} \(json \$\.absent\)/);
  });

  it('fails a step that uses a variable no earlier step extracted, sending nothing', async () => {
    seen.length = 0;
    const r = await run([{ name: 'first', url: `${base}/users/{{uid}}` }]);
    assert.equal(r.ok, false);
    assert.match(r.error?.message ?? '', /No value for \{\{uid\}\}/);
    assert.equal(seen.length, 0);
  });

  it('a failing assertion of a step is the evidence, with the step named', async () => {
    const r = await run([
      { name: 'login', url: `${base}/login`, assertions: [{ source: 'json', path: '$.user.id', operator: 'equals', target: 4 }] },
    ]);
    assert.equal(r.ok, false);
    assert.equal(r.error?.class, 'assertion');
    assert.match(r.assertions?.[0]?.message ?? '', /^Step "login": Expected/);
  });
});
