import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import tls from 'node:tls';
import { checkTcp, type TcpTarget } from '../../probe-agent/src/check/types/tcp.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';
import type { ResolvedAddress } from '../../shared/src/net/lookup.ts';
import { createTestPki, type TestPki } from '../harness/tls.ts';

const BANNER = 'HELLO uptime-test\r\n';

/** What one test server saw: its connections and every byte sent to it. */
type Seen = { connections: Socket[]; received: string };

const servers: Record<string, Server> = {};
let pki: TestPki;
const ports: Record<string, number> = {};
const seen: Record<string, Seen> = {};
let closedPort = 0;

/** Banner on connect; answers each full line with "you said <line>", "bye" and a close for QUIT. */
function lineServer(socket: Socket): void {
  socket.write(BANNER);
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl).replace(/\r$/, '');
      buffered = buffered.slice(nl + 1);
      if (line === 'QUIT') return void socket.end('bye\r\n');
      socket.write(`you said ${line}\r\n`);
    }
  });
}

/** Sends a character split across two chunks: its first bytes on connect, the rest once the client writes. */
const EURO = Buffer.from('€', 'utf8');
function splitCharacter(socket: Socket): void {
  socket.write(Buffer.concat([Buffer.from('price: 5 '), EURO.subarray(0, 2)]));
  socket.once('data', () => socket.write(Buffer.concat([EURO.subarray(2), Buffer.from(' incl. VAT\r\n')])));
}

const closesAtOnce = (socket: Socket) => socket.destroy();
/** Reads (so it notices the client leaving) and never answers. */
const silent = (socket: Socket) => void socket.resume();

async function serve(name: string, server: Server, handler: (socket: Socket) => void): Promise<void> {
  const record: Seen = { connections: [], received: '' };
  seen[name] = record;
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', handler);
  // Every socket, TLS or not, before any handshake: a connection the check should not have made shows up here.
  server.on('connection', (socket: Socket) => {
    record.connections.push(socket);
    socket.on('error', () => {});
  });
  if (server instanceof tls.Server) server.on('tlsClientError', () => {});
  servers[name] = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports[name] = (server.address() as AddressInfo).port;
}

/** Records what a TLS server got after the handshake (what the check sent). */
function recording(name: string, handler: (socket: Socket) => void): (socket: Socket) => void {
  return (socket) => {
    socket.on('data', (chunk: Buffer) => (seen[name]!.received += chunk.toString('utf8')));
    handler(socket);
  };
}

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

function target(server: string, extra: Partial<TcpTarget> = {}): TcpTarget {
  return { host: '127.0.0.1', port: ports[server]!, tls: false, send: null, expect: null, timeout_ms: 3000, ...extra };
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
  const valid = pki.issue({ hosts: ['localhost', '127.0.0.1'] });
  const expired = pki.issue({ hosts: ['localhost'], notBefore: new Date(Date.now() - 30 * day), notAfter: new Date(Date.now() - 2 * day) });
  const otherHost = pki.issue({ hosts: ['other.example'] });
  const selfSigned = pki.selfSigned(['localhost']);
  await serve('lines', net.createServer(), lineServer);
  await serve('closing', net.createServer(), closesAtOnce);
  await serve('split', net.createServer(), splitCharacter);
  await serve('silent', net.createServer(), silent);
  await serve('tls', tls.createServer(valid), recording('tls', lineServer));
  await serve('expired', tls.createServer(expired), recording('expired', lineServer));
  await serve('otherHost', tls.createServer(otherHost), recording('otherHost', lineServer));
  await serve('selfSigned', tls.createServer(selfSigned), recording('selfSigned', lineServer));
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

after(async () => {
  // server.close waits for every connection: a socket a check leaked would hold the suite here.
  await Promise.all(Object.values(servers).map((s) => new Promise((resolve) => s.close(resolve))));
  pki.close();
});

describe('checkTcp', () => {
  it('passes once connected, with nothing received, and closes the connection', async () => {
    const out = await checkTcp(target('silent'), context());
    assert.equal(out.ok, true);
    assert.equal(out.error, null);
    assert.equal(out.status_code, null);
    assert.equal(out.observed.body, undefined);
    assert.equal(out.details, undefined);
    assert.ok(out.timings.connect > 0, `connect ${out.timings.connect}`);
    assert.equal(out.timings.dns, 0, 'an IP literal needs no lookup');
    assert.equal(out.timings.ttfb, 0, 'no byte arrived');
    assert.equal(out.observed.response_time, out.timings.total);
    for (const v of Object.values(out.timings)) assert.equal(Math.round(v * 1000) / 1000, v);
    await latestClosed('silent');
  });

  it('resolves a host name and measures the lookup', async () => {
    const out = await checkTcp(target('silent', { host: 'localhost' }), context());
    assert.equal(out.ok, true);
    assert.ok(out.timings.dns > 0, `dns ${out.timings.dns}`);
  });

  it('reports a closed port as refused', async () => {
    const out = await checkTcp({ ...target('silent'), port: closedPort }, context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'refused', message: 'Connection refused' });
  });

  it('reports a name that does not resolve as dns', async () => {
    const out = await checkTcp(target('silent', { host: 'nowhere.example' }), context());
    assert.equal(out.ok, false);
    assert.equal(out.error?.class, 'dns');
    assert.match(out.error?.message ?? '', /nowhere\.example/);
  });

  it('reads a banner the server sends first', async () => {
    const out = await checkTcp(target('lines', { expect: 'HELLO' }), context());
    assert.equal(out.ok, true);
    assert.equal(out.observed.body, BANNER);
    assert.ok(out.timings.ttfb > 0, `ttfb ${out.timings.ttfb}`);
    await latestClosed('lines');
  });

  it('writes send with its newline as a real newline and finds expect in the reply', async () => {
    const out = await checkTcp(target('lines', { send: 'PING\n', expect: 'you said PING' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.observed.body, `${BANNER}you said PING\r\n`);
  });

  it('decodes a character whose bytes come in two chunks', async () => {
    const out = await checkTcp(target('split', { send: 'GO\n', expect: '5 € incl.' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    assert.equal(out.observed.body, 'price: 5 € incl. VAT\r\n');
  });

  it('fails when the server closes before sending expect, with what it sent as body', async () => {
    const out = await checkTcp(target('lines', { send: 'QUIT\n', expect: 'PONG' }), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'other', message: 'Expected "PONG" not received' });
    assert.equal(out.observed.body, `${BANNER}bye\r\n`);
  });

  it('fails with "Expected" rather than a timeout when the server answers something else until the time runs out', async () => {
    const out = await checkTcp(target('lines', { send: 'PING\n', expect: 'PONG'.repeat(20), timeout_ms: 300 }), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'other', message: `Expected "${'PONG'.repeat(20).slice(0, 50)}" not received` });
    assert.equal(out.observed.body, `${BANNER}you said PING\r\n`);
  });

  it('stops reading at maxBodyBytes', async () => {
    const out = await checkTcp(target('lines', { send: 'PING\n', expect: 'you said' }), context({ maxBodyBytes: 10 }));
    assert.equal(out.ok, false);
    assert.equal(out.error?.message, 'Expected "you said" not received');
    assert.equal(out.observed.body, BANNER.slice(0, 10));
  });

  it('passes without expect when the server closes at once, and fails with expect', async () => {
    const connected = await checkTcp(target('closing'), context());
    assert.equal(connected.ok, true);
    const waiting = await checkTcp(target('closing', { expect: 'anything' }), context());
    assert.equal(waiting.ok, false);
    assert.equal(waiting.error?.message, 'Expected "anything" not received');
    assert.equal(waiting.observed.body, undefined);
  });

  it('times out a TLS handshake the server never answers', async () => {
    const out = await checkTcp(target('silent', { tls: true, timeout_ms: 300 }), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 300 ms' });
    assert.ok(out.timings.connect > 0);
    await latestClosed('silent');
  });

  it('is cancelled by its signal, already aborted or in flight', async () => {
    const early = await checkTcp(target('lines'), context(), AbortSignal.abort());
    assert.deepEqual(early.error, { class: 'other', message: 'Check cancelled' });
    const controller = new AbortController();
    const accepted = once(servers.silent!, 'connection');
    const running = checkTcp(target('silent', { tls: true }), context(), controller.signal);
    await accepted;
    controller.abort();
    const out = await running;
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    await latestClosed('silent');
  });

  it('is cancelled while it waits for expect, after send went out', async () => {
    const server = net.createServer();
    const got = new Promise<string>((resolve) =>
      server.on('connection', (socket: Socket) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')))),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const controller = new AbortController();
    const running = checkTcp({ ...target('silent'), port, send: 'PING\r\n', expect: 'PONG' }, context(), controller.signal);
    // The bytes arrive only once the check is connected and waiting for its reply.
    assert.equal(await got, 'PING\r\n');
    controller.abort();
    const out = await running;
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    await new Promise((resolve) => server.close(resolve));
  });

  it('passes once send was written when there is no expect, and the server gets the bytes', async () => {
    const server = net.createServer();
    const got = new Promise<string>((resolve) =>
      server.on('connection', (socket: Socket) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('close', () => resolve(text));
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const out = await checkTcp({ ...target('silent'), port, send: 'HELLO\n' }, context());
    assert.equal(out.ok, true);
    assert.equal(out.error, null);
    assert.equal(await got, 'HELLO\n');
    await new Promise((resolve) => server.close(resolve));
  });

  it('verifies TLS and reports the certificate', async () => {
    const out = await checkTcp(target('tls', { host: 'localhost', tls: true, send: 'PING\n', expect: 'you said PING' }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
    const cert = out.details?.certificate;
    assert.ok(cert);
    assert.deepEqual(cert.sans, ['localhost', '127.0.0.1']);
    assert.match(cert.subject, /CN=localhost/);
    assert.match(cert.issuer, /CN=Uptime Test CA/);
    assert.ok(cert.days_left > 89 && cert.days_left <= 90, `days_left ${cert.days_left}`);
    assert.equal(out.observed.certificate_days, cert.days_left);
    assert.ok(out.timings.tls > 0, `tls ${out.timings.tls}`);
  });

  it('verifies TLS to an IP address against the certificate IP names', async () => {
    const out = await checkTcp(target('tls', { tls: true }), context());
    assert.equal(out.ok, true, JSON.stringify(out.error));
  });

  it('does not trust the test CA unless the context adds it', async () => {
    const out = await checkTcp(target('tls', { host: 'localhost', tls: true }), context({ extraCaCerts: [] }));
    assert.equal(out.error?.class, 'tls');
    assert.match(out.error?.message ?? '', /^Certificate chain not trusted \(/);
  });

  it('fails an expired certificate, still reports its days, and sends nothing', async () => {
    const out = await checkTcp(target('expired', { host: 'localhost', tls: true, send: 'SECRET\n' }), context());
    assert.equal(out.ok, false);
    const validTo = out.details?.certificate?.valid_to ?? '';
    assert.deepEqual(out.error, { class: 'tls', message: `Certificate expired on ${validTo.slice(0, 10)}` });
    assert.ok((out.observed.certificate_days ?? 0) < -1, `certificate_days ${out.observed.certificate_days}`);
    await latestClosed('expired');
    assert.equal(seen.expired!.received, '');
  });

  it('fails a certificate for another host name', async () => {
    const out = await checkTcp(target('otherHost', { host: 'localhost', tls: true }), context());
    assert.deepEqual(out.error, { class: 'tls', message: 'Certificate is not valid for localhost' });
    assert.ok((out.observed.certificate_days ?? 0) > 80);
  });

  it('fails a self-signed certificate', async () => {
    const out = await checkTcp(target('selfSigned', { host: 'localhost', tls: true }), context());
    assert.deepEqual(out.error, { class: 'tls', message: 'Certificate chain not trusted (DEPTH_ZERO_SELF_SIGNED_CERT)' });
    assert.ok((out.observed.certificate_days ?? 0) > 25);
  });

  it('reports a server that does not speak TLS as a TLS error', async () => {
    const out = await checkTcp(target('lines', { tls: true }), context());
    assert.equal(out.error?.class, 'tls');
    assert.match(out.error?.message ?? '', /^TLS error: /);
  });

  it('applies the address policy to literal and resolved addresses', async () => {
    const before = seen.lines!.connections.length;
    const blocked = { policy: { blockPrivateTargets: true } };
    const literal = await checkTcp(target('lines'), context(blocked));
    assert.deepEqual(literal.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    const named = await checkTcp(target('lines', { host: 'localhost' }), context(blocked));
    assert.deepEqual(named.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
    assert.equal(seen.lines!.connections.length, before, 'no connection was made');
    const allowed = await checkTcp(
      target('lines', { host: 'localhost', expect: 'HELLO' }),
      context({ policy: { blockPrivateTargets: true, allowedAddresses: ['127.0.0.1'] } }),
    );
    assert.equal(allowed.ok, true, JSON.stringify(allowed.error));
  });
});
