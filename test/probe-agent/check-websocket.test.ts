import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { checkWebSocket, type WebSocketTarget } from '../../probe-agent/src/check/types/websocket.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';
import type { ResolvedAddress } from '../../shared/src/net/lookup.ts';
import { createTestPki, type TestPki } from '../harness/tls.ts';

/** What one test server saw: every TCP connection, the upgrade requests, the close codes of its WebSockets. */
type Seen = { connections: Socket[]; upgrades: IncomingHttpHeaders[]; closeCodes: number[]; closed: Array<Promise<unknown>> };

const servers: Record<string, Server> = {};
const seen: Record<string, Seen> = {};
const wsServers: WebSocketServer[] = [];
let pki: TestPki;
let closedPort = 0;

/** Echoes each message as "echo: <text>"; says "bye" and closes on "quit"; refuses the path /forbidden with 403. */
function echoOn(name: string, server: http.Server | https.Server): void {
  const record = seen[name]!;
  const wss = new WebSocketServer({
    server,
    verifyClient: ({ req }, done) => {
      record.upgrades.push(req.headers);
      if (req.url === '/forbidden') done(false, 403);
      else done(true);
    },
  });
  wss.on('connection', (socket: WebSocket) => {
    record.closed.push(once(socket, 'close').then(([code]) => record.closeCodes.push(code as number)));
    socket.on('message', (data) => {
      const text = data.toString();
      if (text === 'quit') return void socket.close(1000, 'bye');
      socket.send(`echo: ${text}`);
    });
  });
  wsServers.push(wss);
}

async function serve(name: string, server: Server): Promise<number> {
  seen[name] ??= { connections: [], upgrades: [], closeCodes: [], closed: [] };
  server.on('connection', (socket: Socket) => {
    seen[name]!.connections.push(socket);
    socket.on('error', () => {});
  });
  servers[name] = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const urls = { plain: '', secure: '', expired: '', silent: '', mute: '' };

const resolve = async (host: string): Promise<ResolvedAddress[]> => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
};

function context(extra: Partial<ProbeContext> = {}): ProbeContext {
  return {
    policy: { blockPrivateTargets: false },
    resolve,
    userAgent: 'uptime-probe/test',
    extraCaCerts: [pki.caPem],
    maxBodyBytes: 1024 * 1024,
    ...extra,
  };
}

function target(url: string, extra: Partial<WebSocketTarget> = {}): WebSocketTarget {
  return { url, headers: [], send: null, expect: null, timeout_ms: 3000, ...extra };
}

/** Resolves once the server's side of its latest connection is closed: the check let go of it. */
const latestClosed = (name: string) => {
  const socket = seen[name]!.connections.at(-1);
  assert.ok(socket, `${name} got no connection`);
  return socket.closed ? Promise.resolve() : once(socket, 'close');
};

before(async () => {
  pki = createTestPki();
  const day = 86_400_000;
  for (const name of ['plain', 'secure', 'expired']) seen[name] = { connections: [], upgrades: [], closeCodes: [], closed: [] };
  const plain = http.createServer();
  echoOn('plain', plain);
  urls.plain = `ws://127.0.0.1:${await serve('plain', plain)}`;
  const secure = https.createServer(pki.issue({ hosts: ['localhost'] }));
  echoOn('secure', secure);
  urls.secure = `wss://localhost:${await serve('secure', secure)}`;
  const expired = https.createServer(
    pki.issue({ hosts: ['localhost'], notBefore: new Date(Date.now() - 30 * day), notAfter: new Date(Date.now() - 2 * day) }),
  );
  echoOn('expired', expired);
  urls.expired = `wss://localhost:${await serve('expired', expired)}`;
  // Takes the TCP connection, reads the upgrade request, never answers it.
  urls.silent = `ws://127.0.0.1:${await serve(
    'silent',
    net.createServer((socket) => void socket.resume()),
  )}`;
  // Accepts the upgrade, then reads every frame and answers none: not even the closing handshake.
  urls.mute = `ws://127.0.0.1:${await serve(
    'mute',
    net.createServer((socket) => {
      socket.once('data', (request: Buffer) => {
        const key = /^sec-websocket-key:\s*(\S+)/im.exec(request.toString('latin1'))?.[1] ?? '';
        const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
        socket.resume();
      });
    }),
  )}`;
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

after(async () => {
  for (const wss of wsServers) wss.close();
  // server.close waits for every connection: a socket a check leaked would hold the suite here.
  await Promise.all(Object.values(servers).map((s) => new Promise((resolve) => s.close(resolve))));
  pki.close();
});

describe('checkWebSocket', () => {
  it('passes on a 101 upgrade, measures it and closes with 1000', async () => {
    const before = seen.plain!.closed.length;
    const out = await checkWebSocket(target(`${urls.plain}/live`), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.error, null);
    assert.equal(out.status_code, 101);
    assert.equal(out.observed.status_code, 101);
    assert.equal(out.observed.body, undefined);
    assert.equal(out.details, undefined);
    assert.equal(out.timings.dns, 0, 'an IP literal needs no lookup');
    assert.ok(out.timings.connect > 0, `connect ${out.timings.connect}`);
    assert.ok(out.timings.ttfb > 0, `ttfb ${out.timings.ttfb}`);
    assert.equal(out.timings.tls, 0);
    assert.equal(out.observed.response_time, out.timings.total);
    for (const v of Object.values(out.timings)) assert.equal(Math.round(v * 1000) / 1000, v);
    await seen.plain!.closed[before];
    assert.equal(seen.plain!.closeCodes.at(-1), 1000);
    await latestClosed('plain');
  });

  it('ends once its socket is closed: a server that never answers the close frame loses it after a second', async () => {
    const t0 = performance.now();
    const out = await checkWebSocket(target(urls.mute), context());
    const tookMs = performance.now() - t0;
    assert.equal(out.ok, true, JSON.stringify(out.error));
    // The check waited for the closing handshake's time, and let go of the socket then...
    assert.ok(tookMs >= 900, `ended ${tookMs} ms after it started, before the closing handshake's time`);
    assert.ok(tookMs < 5_000, `ended ${tookMs} ms after it started: it waited past the closing handshake's time`);
    const socket = seen.mute!.connections.at(-1)!;
    await (socket.closed ? Promise.resolve() : once(socket, 'close'));
    // ...but its response time is the exchange's, without the wait.
    assert.ok((out.observed.response_time ?? Infinity) < tookMs - 500, `response time ${out.observed.response_time} ms of ${tookMs} ms`);
  });

  it('holds no socket once it has ended', async () => {
    const out = await checkWebSocket(target(`${urls.plain}/live`, { send: 'hello', expect: 'echo: hello' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    // The closing handshake is over when the check ends: the server's side is closed or closing.
    const socket = seen.plain!.connections.at(-1)!;
    assert.ok(socket.readableEnded || socket.closed || socket.destroyed, 'the server still has an open connection of an ended check');
  });

  it('fails a refused upgrade with its status', async () => {
    const out = await checkWebSocket(target(`${urls.plain}/forbidden`), context());
    assert.equal(out.ok, false);
    assert.equal(out.status_code, 403);
    assert.deepEqual(out.error, { class: 'status', message: 'Upgrade refused with status 403' });
    await latestClosed('plain');
  });

  it('sends a message and finds expect in the reply', async () => {
    const out = await checkWebSocket(target(urls.plain, { send: 'hello', expect: 'echo: hello' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.observed.body, 'echo: hello');
  });

  it('keeps waiting past messages without expect, then fails with the last one as body', async () => {
    const out = await checkWebSocket(target(urls.plain, { send: 'hello', expect: 'goodbye', timeout_ms: 300 }), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'other', message: 'Expected "goodbye" not received' });
    assert.equal(out.observed.body, 'echo: hello');
    assert.equal(out.status_code, 101);
  });

  it('fails with "Expected" when the server closes first', async () => {
    const out = await checkWebSocket(target(urls.plain, { send: 'quit', expect: 'x'.repeat(80) }), context());
    assert.deepEqual(out.error, { class: 'other', message: `Expected "${'x'.repeat(50)}" not received` });
    assert.equal(out.observed.body, undefined);
  });

  it('cuts a message at maxBodyBytes', async () => {
    const out = await checkWebSocket(target(urls.plain, { send: 'hello', expect: 'echo' }), context({ maxBodyBytes: 4 }));
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.observed.body, 'echo');
  });

  it('sends the monitor headers and the user agent with the upgrade', async () => {
    const out = await checkWebSocket(target(urls.plain, { headers: [{ name: 'X-Probe-Token', value: 'abc123' }] }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    const headers = seen.plain!.upgrades.at(-1);
    assert.equal(headers?.['x-probe-token'], 'abc123');
    assert.equal(headers?.['user-agent'], 'uptime-probe/test');
  });

  it('verifies wss and reports the certificate', async () => {
    const out = await checkWebSocket(target(urls.secure, { send: 'hi', expect: 'echo: hi' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.status_code, 101);
    const cert = out.details?.certificate;
    assert.ok(cert);
    assert.deepEqual(cert.sans, ['localhost']);
    assert.match(cert.issuer, /CN=Uptime Test CA/);
    assert.ok(cert.days_left > 89 && cert.days_left <= 90, `days_left ${cert.days_left}`);
    assert.equal(out.observed.certificate_days, cert.days_left);
    assert.ok(out.timings.dns > 0, `dns ${out.timings.dns}`);
    assert.ok(out.timings.tls > 0, `tls ${out.timings.tls}`);
  });

  it('fails an expired certificate before sending the upgrade request', async () => {
    const out = await checkWebSocket(target(urls.expired, { headers: [{ name: 'authorization', value: 'Bearer s3cret' }] }), context());
    assert.equal(out.ok, false);
    const validTo = out.details?.certificate?.valid_to ?? '';
    assert.deepEqual(out.error, { class: 'tls', message: `Certificate expired on ${validTo.slice(0, 10)}` });
    assert.ok((out.observed.certificate_days ?? 0) < -1);
    assert.equal(out.status_code, null);
    await latestClosed('expired');
    assert.equal(seen.expired!.upgrades.length, 0, 'the request never went out');
  });

  it('times out an upgrade the server never answers', async () => {
    const out = await checkWebSocket(target(`${urls.silent}/`, { timeout_ms: 300 }), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 300 ms' });
    assert.equal(out.status_code, null);
    await latestClosed('silent');
  });

  it('is cancelled by its signal', async () => {
    const controller = new AbortController();
    const accepted = once(servers.silent!, 'connection');
    const running = checkWebSocket(target(urls.silent), context(), controller.signal);
    await accepted;
    controller.abort();
    assert.deepEqual((await running).error, { class: 'other', message: 'Check cancelled' });
    await latestClosed('silent');
    const early = await checkWebSocket(target(urls.plain), context(), AbortSignal.abort());
    assert.deepEqual(early.error, { class: 'other', message: 'Check cancelled' });
  });

  it('reports a closed port as refused and a bad URL as such', async () => {
    const refused = await checkWebSocket(target(`ws://127.0.0.1:${closedPort}/`), context());
    assert.deepEqual(refused.error, { class: 'refused', message: 'Connection refused' });
    const scheme = await checkWebSocket(target('http://127.0.0.1/'), context());
    assert.deepEqual(scheme.error, { class: 'other', message: 'Unsupported URL scheme http:' });
    const invalid = await checkWebSocket(target('not a url'), context());
    assert.deepEqual(invalid.error, { class: 'other', message: 'Invalid URL' });
  });

  it('applies the address policy to literal and resolved addresses', async () => {
    const before = seen.plain!.connections.length;
    const blocked = { policy: { blockPrivateTargets: true } };
    const literal = await checkWebSocket(target(urls.plain), context(blocked));
    assert.deepEqual(literal.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    const named = await checkWebSocket(target(urls.plain.replace('127.0.0.1', 'localhost')), context(blocked));
    assert.deepEqual(named.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    assert.equal(seen.plain!.connections.length, before, 'no connection was made');
    const allowed = await checkWebSocket(
      target(urls.plain.replace('127.0.0.1', 'localhost')),
      context({ policy: { blockPrivateTargets: true, allowedAddresses: ['127.0.0.1'] } }),
    );
    assert.equal(allowed.ok, true, JSON.stringify(allowed.error));
  });
});
