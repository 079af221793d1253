import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChecker, type CheckTarget, type Checker, type CheckerOptions } from '../../probe-agent/src/check/check.ts';
import { createDnsCache, type ResolvedAddress } from '../../probe-agent/src/check/dns-cache.ts';

type Seen = { method: string; url: string; authorization: string | undefined; userAgent: string | undefined };

const seen: Seen[] = [];
const hanging = new Set<http.ServerResponse>();
const hangingSocketsClosed: Promise<void>[] = [];
const sockets = new Set<Socket>();
let connectionsAccepted = 0;
let httpServer: http.Server;
let httpsServer: https.Server;
let base = '';
let httpsBase = '';
let closedPort = 0;
let certPem = '';
let certDir = '';

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  seen.push({
    method: req.method ?? '',
    url: url.pathname,
    authorization: req.headers.authorization,
    userAgent: req.headers['user-agent'],
  });
  const redirect = /^\/redirect\/(\d+)$/.exec(url.pathname);
  if (redirect) {
    const left = Number(redirect[1]);
    res.writeHead(left === 0 ? 200 : 302, left === 0 ? {} : { location: `/redirect/${left - 1}` });
    return void res.end('x');
  }
  if (url.pathname === '/go') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' });
    return void res.end();
  }
  if (url.pathname.startsWith('/status/')) {
    res.writeHead(Number(url.pathname.slice('/status/'.length)));
    return void res.end('status');
  }
  if (url.pathname === '/hang') {
    hanging.add(res);
    hangingSocketsClosed.push(new Promise((resolve) => req.socket.once('close', () => resolve())));
    return;
  }
  if (url.pathname === '/big') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sent = 0;
    const pump = () => {
      while (sent < 8 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    return pump();
  }
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok');
}

function listen(server: http.Server | https.Server): Promise<number> {
  server.on('connection', (s: Socket) => {
    connectionsAccepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function target(url: string, extra: Partial<CheckTarget> = {}): CheckTarget {
  return {
    url,
    method: 'GET',
    valid_http_codes: [200],
    basic_auth_username: null,
    basic_auth_password: null,
    timeout_ms: 3000,
    follow_redirects: true,
    ...extra,
  };
}

// undici validates an idle socket for one event-loop turn before it lends it out again.
const idle = () => new Promise((resolve) => setTimeout(resolve, 5));

const checkers: Checker[] = [];
function checker(opts: Partial<CheckerOptions> = {}): Checker {
  const c = createChecker({ userAgent: 'uptime-probe/test', blockPrivateTargets: false, ...opts });
  checkers.push(c);
  return c;
}

before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'check-test-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  certPem = readFileSync(join(certDir, 'cert.pem'), 'utf8');
  httpServer = http.createServer(handle);
  httpsServer = https.createServer({ key: readFileSync(join(certDir, 'key.pem')), cert: certPem }, handle);
  base = `http://127.0.0.1:${await listen(httpServer)}`;
  httpsBase = `https://127.0.0.1:${await listen(httpsServer)}`;
  const probe = http.createServer();
  closedPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
  await new Promise((resolve) => probe.close(resolve));
});

after(async () => {
  await Promise.all(checkers.map((c) => c.close()));
  for (const res of hanging) res.destroy();
  for (const s of sockets) s.destroy();
  await Promise.all([new Promise((resolve) => httpServer.close(resolve)), new Promise((resolve) => httpsServer.close(resolve))]);
  rmSync(certDir, { recursive: true, force: true });
});

describe('createChecker', () => {
  it('reports ok with the status code for a 200', async () => {
    const out = await checker().run(target(`${base}/ok`));
    assert.equal(out.ok, true);
    assert.equal(out.status_code, 200);
    assert.equal(out.error, null);
  });

  it('fails with class status when the code is not a valid one', async () => {
    const out = await checker().run(target(`${base}/status/503`));
    assert.equal(out.ok, false);
    assert.equal(out.status_code, 503);
    assert.deepEqual(out.error, { class: 'status', message: 'Unexpected status 503' });
  });

  it('accepts custom valid codes', async () => {
    const out = await checker().run(target(`${base}/status/503`, { valid_http_codes: [200, 503] }));
    assert.equal(out.ok, true);
    assert.equal(out.status_code, 503);
  });

  it('sends the method, basic auth and user agent', async () => {
    const c = checker();
    const out = await c.run(target(`${base}/echo`, { method: 'POST', basic_auth_username: 'alice', basic_auth_password: 's3cr:t' }));
    assert.equal(out.ok, true);
    const req = seen.findLast((s) => s.url === '/echo');
    assert.equal(req?.method, 'POST');
    assert.equal(req?.authorization, `Basic ${Buffer.from('alice:s3cr:t').toString('base64')}`);
    assert.equal(req?.userAgent, 'uptime-probe/test');
    const head = await c.run(target(`${base}/echo-head`, { method: 'HEAD' }));
    assert.equal(head.ok, true);
    assert.equal(seen.findLast((s) => s.url === '/echo-head')?.method, 'HEAD');
  });

  it('times out a server that never answers within the bound and closes the socket', async () => {
    const before = hangingSocketsClosed.length;
    const out = await checker().run(target(`${base}/hang`, { timeout_ms: 300 }));
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'timeout');
    assert.equal(out.status_code, null);
    assert.ok(out.timings.total >= 299 && out.timings.total < 500, `total ${out.timings.total}`);
    assert.equal(hangingSocketsClosed.length, before + 1);
    await hangingSocketsClosed[before];
  });

  it('times out while DNS never answers', async () => {
    const started = performance.now();
    const out = await checker({ resolve: () => new Promise<ResolvedAddress[]>(() => {}) }).run(
      target('http://slow.example/', { timeout_ms: 200 }),
    );
    assert.equal(out.error?.class, 'timeout');
    assert.ok(performance.now() - started < 400);
  });

  it('classifies a closed port as refused', async () => {
    const out = await checker().run(target(`http://127.0.0.1:${closedPort}/`));
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'refused');
    assert.equal(out.status_code, null);
  });

  it('classifies an unresolvable name as dns', async () => {
    const out = await checker().run(target('http://no-such-host.invalid/'));
    assert.equal(out.error?.class, 'dns');
    assert.match(out.error?.message ?? '', /no-such-host\.invalid/);
  });

  it('classifies a self-signed certificate as tls', async () => {
    const out = await checker().run(target(`${httpsBase}/ok`));
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'tls');
    assert.match(out.error?.message ?? '', /self-signed/);
  });

  it('follows a redirect chain of five hops to the final status on one connection', async () => {
    const accepted = connectionsAccepted;
    const out = await checker().run(target(`${base}/redirect/5`));
    assert.equal(out.ok, true);
    assert.equal(out.status_code, 200);
    assert.equal(connectionsAccepted - accepted, 1);
  });

  it('fails after more than five redirects', async () => {
    const out = await checker().run(target(`${base}/redirect/6`));
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'other');
    assert.match(out.error?.message ?? '', /Too many redirects/);
    assert.equal(out.status_code, 302);
  });

  it('judges the 3xx itself when redirects are not followed', async () => {
    const c = checker();
    const strict = await c.run(target(`${base}/redirect/1`, { follow_redirects: false }));
    assert.deepEqual(strict.error, { class: 'status', message: 'Unexpected status 302' });
    const lenient = await c.run(target(`${base}/redirect/1`, { follow_redirects: false, valid_http_codes: [302] }));
    assert.equal(lenient.ok, true);
    assert.equal(lenient.status_code, 302);
  });

  it('drops credentials on a redirect to another origin and turns 303 into GET', async () => {
    const to = encodeURIComponent(`${base.replace('127.0.0.1', 'localhost')}/after-redirect`);
    const out = await checker().run(
      target(`${base}/go?status=303&to=${to}`, { method: 'POST', basic_auth_username: 'a', basic_auth_password: 'b' }),
    );
    assert.equal(out.ok, true);
    assert.equal(seen.findLast((s) => s.url === '/go')?.authorization?.startsWith('Basic '), true);
    const final = seen.findLast((s) => s.url === '/after-redirect');
    assert.equal(final?.authorization, undefined);
    assert.equal(final?.method, 'GET');
  });

  it('refuses a blocked address given directly', async () => {
    const out = await checker({ blockPrivateTargets: true }).run(target(`${base}/ok`));
    assert.deepEqual(out.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    assert.equal(out.status_code, null);
  });

  it('refuses a name that resolves to a blocked address', async () => {
    const resolve = async () => [{ address: '169.254.169.254', family: 4 as const }];
    const out = await checker({ blockPrivateTargets: true, resolve }).run(target('http://metadata.example/latest'));
    assert.deepEqual(out.error, { class: 'other', message: 'Target address 169.254.169.254 is not allowed' });
  });

  it('refuses a redirect hop to a blocked address', async () => {
    // 127.0.0.1 is exempted so the first hop reaches the test server; both later targets are not.
    const resolve = async () => [{ address: '10.1.2.3', family: 4 as const }];
    const c = checker({ blockPrivateTargets: true, allowedAddresses: ['127.0.0.1'], resolve });
    const port = new URL(base).port;
    const direct = await c.run(target(`${base}/go?to=${encodeURIComponent(`http://127.0.0.2:${port}/ok`)}`));
    assert.deepEqual(direct.error, { class: 'other', message: 'Target address 127.0.0.2 is not allowed' });
    const viaName = await c.run(target(`${base}/go?to=${encodeURIComponent('http://internal.example/')}`));
    assert.deepEqual(viaName.error, { class: 'other', message: 'Target address 10.1.2.3 is not allowed' });
  });

  it('measures connect on a fresh connection and reuses it on the next check', async () => {
    const c = checker();
    const first = await c.run(target(`${base}/ok`));
    assert.equal(first.ok, true);
    assert.ok(first.timings.connect > 0, `connect ${first.timings.connect}`);
    assert.equal(first.timings.tls, 0);
    assert.equal(first.timings.dns, 0, 'an IP literal needs no lookup');
    assert.ok(first.timings.ttfb > 0);
    assert.ok(first.timings.total >= first.timings.connect + first.timings.ttfb);
    await idle();
    const second = await c.run(target(`${base}/ok`));
    assert.equal(second.ok, true);
    assert.deepEqual([second.timings.dns, second.timings.connect, second.timings.tls], [0, 0, 0]);
    assert.ok(second.timings.ttfb > 0);
  });

  it('attributes each fresh connection to exactly one of several concurrent checks', async () => {
    const c = checker();
    const accepted = connectionsAccepted;
    const first = await Promise.all(Array.from({ length: 6 }, () => c.run(target(`${base}/ok`))));
    const opened = connectionsAccepted - accepted;
    assert.ok(opened >= 1);
    assert.equal(first.filter((o) => o.timings.connect > 0).length, opened);
    await idle();
    const again = await Promise.all(Array.from({ length: opened }, () => c.run(target(`${base}/ok`))));
    assert.equal(connectionsAccepted - accepted, opened, 'the second round reuses the pool');
    assert.ok(again.every((o) => o.ok && o.timings.connect === 0));
  });

  it('measures dns, connect and tls on https with a trusted certificate', async () => {
    const c = checker({ extraCaCerts: [certPem] });
    const port = new URL(httpsBase).port;
    const out = await c.run(target(`https://localhost:${port}/ok`));
    assert.equal(out.error, null);
    assert.ok(out.timings.dns > 0, `dns ${out.timings.dns}`);
    assert.ok(out.timings.connect > 0, `connect ${out.timings.connect}`);
    assert.ok(out.timings.tls > 0, `tls ${out.timings.tls}`);
    for (const v of Object.values(out.timings)) assert.equal(Math.round(v * 1000) / 1000, v);
    await idle();
    const again = await c.run(target(`https://localhost:${port}/ok`));
    assert.deepEqual([again.timings.dns, again.timings.connect, again.timings.tls], [0, 0, 0]);
  });

  it('stops reading a large body at the cap', async () => {
    const out = await checker({ maxBodyBytes: 128 * 1024 }).run(target(`${base}/big`));
    assert.equal(out.ok, true);
    assert.equal(out.status_code, 200);
  });

  it('reports a cancelled check without waiting for the server', async () => {
    const ac = new AbortController();
    const running = checker().run(target(`${base}/hang`, { timeout_ms: 5000 }), ac.signal);
    setTimeout(() => ac.abort(), 50);
    const out = await running;
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
  });

  it('rejects a non-http url as other', async () => {
    const out = await checker().run(target('ftp://example.com/'));
    assert.equal(out.error?.class, 'other');
  });
});

describe('createDnsCache', () => {
  it('answers from the cache within the ttl and asks again after it', async () => {
    let clock = 0;
    let queries = 0;
    const cache = createDnsCache({
      ttlMs: 1000,
      now: () => clock,
      resolve: async () => (queries++, [{ address: '192.0.2.1', family: 4 }]),
    });
    await cache.resolve('a.example');
    await cache.resolve('A.example');
    assert.equal(queries, 1);
    clock = 1001;
    await cache.resolve('a.example');
    assert.equal(queries, 2);
  });

  it('shares one query between concurrent lookups and does not cache failures', async () => {
    let queries = 0;
    const cache = createDnsCache({
      resolve: async () => {
        queries++;
        throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
      },
    });
    const results = await Promise.allSettled([cache.resolve('x.example'), cache.resolve('x.example')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(queries, 1);
    await assert.rejects(cache.resolve('x.example'));
    assert.equal(queries, 2);
    assert.equal(cache.size, 0);
  });

  it('evicts the least recently used name beyond its bound', async () => {
    const cache = createDnsCache({ maxEntries: 2, resolve: async (h) => [{ address: h === 'a' ? '192.0.2.1' : '192.0.2.2', family: 4 }] });
    await cache.resolve('a');
    await cache.resolve('b');
    await cache.resolve('a');
    await cache.resolve('c');
    assert.equal(cache.size, 2);
    let asked = '';
    const probe = createDnsCache({ maxEntries: 2, resolve: async (h) => ((asked += h), [{ address: '192.0.2.9', family: 4 }]) });
    await probe.resolve('a');
    await probe.resolve('b');
    await probe.resolve('a');
    await probe.resolve('c');
    await probe.resolve('a');
    await probe.resolve('b');
    assert.equal(asked, 'abcb');
  });
});
