import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { RouteInfo } from '../../control-plane/src/platform/http/route-table.ts';
import { startPingEdge, type PingEdge } from '../../probe-agent/src/ping-edge.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { createMetrics } from '../../shared/src/metrics.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';

/**
 * Every path the application serves, taken from its route table, is asked with every method a
 * client may send. What the path answers decides the expectation: a method that is refused with
 * 405 must not be in `Allow`, every method in `Allow` must be served (whatever its answer without
 * credentials), and every 405 of a path carries the same `Allow`.
 */
const probeMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY', 'PROPFIND'] as const;

/** A concrete address for a route pattern. */
function pathOf(url: string): string {
  return url
    .replace(':suffix', 'start')
    .replace(':file', 'x.svg')
    .replace(':name', 'app.css')
    .replace(/:[A-Za-z]+/g, () => randomUUID())
    .replace('*', 'x.js');
}

/** Paths whose errors are pages: the dashboard's, and a public status page's (its history and incidents included). */
const isDashboard = (path: string) => path.startsWith('/app/') || path.startsWith('/status/');

interface Answer {
  status: number;
  allow: string | undefined;
  contentType: string | undefined;
  body: string;
}

async function ask(base: string, method: string, path: string): Promise<Answer> {
  const res = await request(base + path, { method: method as 'GET' });
  const body = await res.body.text();
  const header = (name: string) => {
    const v = res.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return { status: res.statusCode, allow: header('allow'), contentType: header('content-type'), body };
}

/** A request line the HTTP parser itself cannot read: answered before any route is looked up. */
function rawStatusLine(port: number, requestLine: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\n\r\n`));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

const parseAllow = (allow: string | undefined) =>
  (allow ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);

describe('methods a path does not have', () => {
  let cp: TestControlPlane;
  let paths: Map<string, string[]>;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    paths = new Map();
    for (const r of cp.cp.app!.routeTable as RouteInfo[]) {
      const methods = paths.get(r.url) ?? [];
      methods.push(r.method);
      paths.set(r.url, methods);
    }
  });
  after(() => cp.stop());

  it('covers every kind of path: API, dashboard, ping and notify URLs, MCP, status pages, health, documentation', () => {
    for (const url of [
      '/monitors',
      '/monitors/:id',
      '/app/monitors',
      '/heartbeat/:id',
      '/api/notify/:id',
      '/mcp',
      '/status/:slug',
      '/healthz',
      '/openapi.json',
      '/docs/',
    ]) {
      assert.ok(paths.has(url), `${url} is in the route table`);
    }
  });

  it('answers 405 with an Allow that lists exactly the methods the path serves', async () => {
    const problems: string[] = [];
    const entries = [...paths.entries()];
    const check = async ([url, recorded]: [string, string[]]) => {
      const path = pathOf(url);
      const answers = new Map<string, Answer>();
      for (const method of new Set([...probeMethods, ...recorded])) answers.set(method, await ask(cp.url, method, path));
      const refused = [...answers].filter(([, a]) => a.status === 405);
      const served = [...answers]
        .filter(([, a]) => a.status !== 405)
        .map(([m]) => m)
        .sort();
      const allows = new Set(refused.map(([, a]) => a.allow));
      if (refused.length === 0) problems.push(`${url}: no method is refused`);
      if (allows.size !== 1) problems.push(`${url}: its 405s disagree on Allow: ${[...allows].join(' | ')}`);
      const allow = parseAllow(refused[0]?.[1].allow);
      if ([...allow].sort().join() !== served.join()) problems.push(`${url}: Allow ${allow.join(', ')} but serves ${served.join(', ')}`);
      for (const method of served) if (!recorded.includes(method)) problems.push(`${url}: ${method} is served without a route`);
      for (const [method, a] of refused) {
        if (method === 'HEAD') continue;
        if (isDashboard(path)) {
          if (!a.contentType?.startsWith('text/html')) problems.push(`${method} ${url}: a dashboard 405 is a page, got ${a.contentType}`);
        } else if (url.startsWith('/heartbeat/') && a.contentType?.startsWith('text/plain')) {
          if (a.body !== 'Method not allowed') problems.push(`${method} ${url}: ${a.body}`);
        } else if (a.body && JSON.parse(a.body).message !== 'Method not allowed') {
          problems.push(`${method} ${url}: ${a.body}`);
        }
      }
    };
    // A few paths at a time: enough to be quick, few enough for a small machine.
    for (let i = 0; i < entries.length; i += 6) await Promise.all(entries.slice(i, i + 6).map(check));
    assert.deepEqual(problems, []);
  });

  it('names the methods in a fixed order, HEAD after the methods it mirrors', async () => {
    const cases: [string, string, string][] = [
      ['TRACE', '/monitors', 'GET, POST, HEAD'],
      ['PATCH', `/monitors/${randomUUID()}`, 'GET, PUT, DELETE, HEAD'],
      ['PUT', `/heartbeats/${randomUUID()}`, 'GET, PATCH, DELETE, HEAD'],
      ['DELETE', '/healthz', 'GET, HEAD'],
      ['QUERY', '/monitors', 'GET, POST, HEAD'],
      ['GET', '/mcp', 'POST'],
      ['OPTIONS', `/api/notify/${randomUUID()}`, 'GET, POST'],
      ['TRACE', `/heartbeat/${randomUUID()}`, 'GET, POST, HEAD'],
      ['PUT', '/app/monitors', 'GET, POST, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const a = await ask(cp.url, method, path);
      assert.equal(a.status, 405, `${method} ${path}`);
      assert.equal(a.allow, allow, `${method} ${path}`);
    }
  });

  it('refuses a wrong method before asking for credentials or reading the body', async () => {
    const res = await request(`${cp.url}/monitors`, {
      method: 'QUERY' as 'GET',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    assert.equal(res.statusCode, 405);
    assert.deepEqual(await res.body.json(), { message: 'Method not allowed' });
  });

  it('keeps 404 for a path that does not exist, whatever the method or body, in the answer of its scope', async () => {
    for (const path of ['/nope', '/monitors/x/y/z', '/app/nope', '/api/notify', '/heartbeat', '/status/x/y/z/w']) {
      for (const method of probeMethods) {
        const a = await ask(cp.url, method, path);
        assert.equal(a.status, 404, `${method} ${path}`);
        assert.equal(a.allow, undefined, `${method} ${path}`);
        if (method === 'HEAD') continue;
        if (isDashboard(path)) assert.match(a.contentType ?? '', /^text\/html/, `${method} ${path}`);
        else assert.deepEqual(JSON.parse(a.body), { message: 'Not found' }, `${method} ${path}`);
      }
    }
    for (const [headers, body] of [
      [{ 'content-type': 'application/json' }, '{'],
      [{ 'content-type': 'text/xml' }, '<a/>'],
    ] as const) {
      const res = await request(`${cp.url}/nope`, { method: 'PUT', headers, body });
      assert.equal(res.statusCode, 404);
      await res.body.dump();
    }
  });

  it('answers 501 to a method the server does not implement at all', async () => {
    const port = Number(new URL(cp.url).port);
    assert.match(await rawStatusLine(port, 'BREW /monitors HTTP/1.1'), /^HTTP\/1\.1 501 /);
    assert.match(await rawStatusLine(port, 'BREW /nope HTTP/1.1'), /^HTTP\/1\.1 501 /);
  });
});

describe("methods on a probe agent's ping edge", () => {
  let nats: TestNats;
  let edge: PingEdge;
  before(async () => {
    nats = await createTestNats();
    const config = loadConfig({ NATS_URL: nats.url, NATS_NAMESPACE: nats.namespace, LOG_LEVEL: 'silent' });
    edge = await startPingEdge({
      config,
      nc: nats.nc,
      names: nats.names,
      region: 'eu-west',
      log: quietLog,
      metrics: createMetrics(),
      port: 0,
      host: '127.0.0.1',
    });
  });
  after(async () => {
    await edge.stop();
    await nats.close();
  });

  it('answers 405 with Allow: GET, POST, HEAD to every method a ping URL does not have', async () => {
    for (const path of [`/heartbeat/${randomUUID()}`, `/heartbeat/${randomUUID()}/fail`]) {
      for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY']) {
        const a = await ask(edge.url, method, path);
        assert.equal(a.status, 405, `${method} ${path}`);
        assert.equal(a.allow, 'GET, POST, HEAD', `${method} ${path}`);
      }
    }
    const health = await ask(edge.url, 'DELETE', '/healthz');
    assert.equal(health.status, 405);
    assert.equal(health.allow, 'GET, HEAD');
    assert.equal((await ask(edge.url, 'TRACE', '/nope')).status, 404);
    assert.match(await rawStatusLine(Number(new URL(edge.url).port), 'BREW /heartbeat/x HTTP/1.1'), /^HTTP\/1\.1 501 /);
  });
});
