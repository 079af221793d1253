import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Server, ServerCredentials, status, type ServerUnaryCall, type ServiceDefinition, type sendUnaryData } from '@grpc/grpc-js';
import { createServer, type AddressInfo } from 'node:net';
import type { AddressPolicy, ResolvedAddress } from '../../shared/src/net/lookup.ts';
import {
  checkGrpc,
  decodeHealthRequest,
  decodeHealthResponse,
  encodeHealthRequest,
  encodeHealthResponse,
  HEALTH_CHECK_PATH,
  type GrpcTarget,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from '../../probe-agent/src/check/types/grpc.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';
import { createTestPki, type TestPki } from '../harness/tls.ts';
import { registerSecret } from '../harness/secrets.ts';

const API_KEY = 'grpc-test-api-key-5f1c2d';
registerSecret(API_KEY);

const healthService: ServiceDefinition = {
  Check: {
    path: HEALTH_CHECK_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: encodeHealthRequest,
    requestDeserialize: decodeHealthRequest,
    responseSerialize: encodeHealthResponse,
    responseDeserialize: decodeHealthResponse,
  },
};

const SERVING = 1;
const NOT_SERVING = 2;
const healthOf: Record<string, number> = { '': SERVING, 'svc.A': SERVING, 'svc.B': NOT_SERVING };

type Received = { service: string; apiKey: unknown; authority: string };
const received: Received[] = [];

function check(call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>): void {
  const { service } = call.request;
  received.push({ service, apiKey: call.metadata.get('x-api-key')[0], authority: call.getHost() });
  if (service === 'svc.echo') {
    // A server quoting the credential it refused.
    return callback({ code: status.PERMISSION_DENIED, details: `invalid key ${String(call.metadata.get('x-api-key')[0])}` });
  }
  const health = healthOf[service];
  if (health === undefined) return callback({ code: status.NOT_FOUND, details: 'unknown service' });
  callback(null, { status: health });
}

/** Calls the hanging server got and never answers; each resolves the waiter of the test that made it. */
let onHangingCall: (() => void) | null = null;
const hangingCallArrived = () => new Promise<void>((resolve) => (onHangingCall = resolve));

const healthServer = new Server();
healthServer.addService(healthService, { Check: check });
const bareServer = new Server();
const hangingServer = new Server();
hangingServer.addService(healthService, { Check: () => onHangingCall?.() });

const ports = { plain: 0, bare: 0, hanging: 0, tls: 0, expired: 0, selfSigned: 0, closed: 0 };
let pki: TestPki;

function bind(server: Server, creds = ServerCredentials.createInsecure()): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, port) => (err ? reject(err) : resolve(port))));
}

function tlsCredentials(pair: { key: string; cert: string }): ServerCredentials {
  return ServerCredentials.createSsl(null, [{ private_key: Buffer.from(pair.key), cert_chain: Buffer.from(pair.cert) }], false);
}

const DAY = 86_400_000;

before(async () => {
  pki = createTestPki();
  ports.plain = await bind(healthServer);
  ports.tls = await bind(healthServer, tlsCredentials(pki.issue({ hosts: ['grpc.test'] })));
  ports.expired = await bind(
    healthServer,
    tlsCredentials(
      pki.issue({ hosts: ['grpc.test'], notBefore: new Date(Date.now() - 60 * DAY), notAfter: new Date(Date.now() - 2 * DAY) }),
    ),
  );
  ports.selfSigned = await bind(healthServer, tlsCredentials(pki.selfSigned(['grpc.test'])));
  ports.bare = await bind(bareServer);
  ports.hanging = await bind(hangingServer);
  const probe = createServer();
  ports.closed = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
  await new Promise((resolve) => probe.close(resolve));
});

after(() => {
  for (const server of [healthServer, bareServer, hangingServer]) server.forceShutdown();
  pki.close();
});

/** Test names all point at loopback; anything else does not exist. */
async function resolve(hostname: string): Promise<ResolvedAddress[]> {
  if (hostname.endsWith('.test')) return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

function context(policy: AddressPolicy = { blockPrivateTargets: false }): ProbeContext {
  return { policy, resolve, userAgent: 'uptime-probe/test', extraCaCerts: [pki.caPem], maxBodyBytes: 64 * 1024 };
}

function target(port: number, extra: Partial<GrpcTarget> = {}): GrpcTarget {
  return { host: '127.0.0.1', port, tls: false, service: '', metadata: [], timeout_ms: 3000, ...extra };
}

describe('health codec', () => {
  it('encodes the service name as field 1 and leaves an empty name out', () => {
    assert.deepEqual(encodeHealthRequest({ service: '' }), Buffer.alloc(0));
    assert.deepEqual(encodeHealthRequest({ service: 'svc.A' }), Buffer.from([0x0a, 5, ...Buffer.from('svc.A')]));
    const long = { service: 'x'.repeat(200) };
    assert.deepEqual(encodeHealthRequest(long).subarray(0, 3), Buffer.from([0x0a, 0xc8, 0x01]));
    assert.deepEqual(decodeHealthRequest(encodeHealthRequest(long)), long);
    assert.deepEqual(decodeHealthRequest(encodeHealthRequest({ service: 'sérvice' })), { service: 'sérvice' });
  });

  it('reads the status past fields it does not know', () => {
    const unknownFields = Buffer.from([0x10, 0x96, 0x01, 0x1a, 2, 0x61, 0x62, 0x25, 1, 2, 3, 4, 0x29, 1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(decodeHealthResponse(Buffer.concat([unknownFields, Buffer.from([0x08, 2])])), { status: NOT_SERVING });
    assert.deepEqual(decodeHealthResponse(Buffer.alloc(0)), { status: 0 });
    assert.deepEqual(decodeHealthResponse(encodeHealthResponse({ status: 3 })), { status: 3 });
  });

  it('rejects a truncated message', () => {
    assert.throws(() => decodeHealthResponse(Buffer.from([0x1a, 5, 0x61])), /Truncated/);
    assert.throws(() => decodeHealthResponse(Buffer.from([0x08, 0x80])), /Truncated/);
  });
});

describe('checkGrpc', () => {
  it('passes when the server as a whole is SERVING', async () => {
    const out = await checkGrpc(target(ports.plain), context());
    assert.equal(out.error, null);
    assert.equal(out.ok, true);
    assert.equal(out.status_code, 0);
    assert.equal(out.observed.grpc_status, 'SERVING');
    assert.deepEqual(out.details, { grpc: { status: 'SERVING' } });
    assert.equal(out.observed.response_time, out.timings.total);
    assert.equal(out.timings.ttfb, out.timings.total);
  });

  it('asks about the named service', async () => {
    const out = await checkGrpc(target(ports.plain, { service: 'svc.A' }), context());
    assert.equal(out.ok, true);
    assert.equal(received.at(-1)?.service, 'svc.A');
  });

  it('fails on a service that is NOT_SERVING', async () => {
    const out = await checkGrpc(target(ports.plain, { service: 'svc.B' }), context());
    assert.equal(out.ok, false);
    assert.equal(out.status_code, 0);
    assert.equal(out.observed.grpc_status, 'NOT_SERVING');
    assert.deepEqual(out.error, { class: 'status', message: 'The service is NOT_SERVING' });
  });

  it('reports a service the server does not know as SERVICE_UNKNOWN', async () => {
    const out = await checkGrpc(target(ports.plain, { service: 'svc.Z' }), context());
    assert.equal(out.ok, false);
    assert.equal(out.status_code, status.NOT_FOUND);
    assert.equal(out.observed.grpc_status, 'SERVICE_UNKNOWN');
    assert.deepEqual(out.details?.grpc, { status: 'SERVICE_UNKNOWN' });
    assert.deepEqual(out.error, { class: 'status', message: 'The server does not know the service "svc.Z"' });
  });

  it('sends the metadata and the host name as the authority', async () => {
    const out = await checkGrpc(
      target(ports.plain, { host: 'grpc.test', service: 'svc.A', metadata: [{ name: 'X-Api-Key', value: API_KEY }] }),
      context(),
    );
    assert.equal(out.ok, true);
    assert.deepEqual(received.at(-1), { service: 'svc.A', apiKey: API_KEY, authority: `grpc.test:${ports.plain}` });
  });

  it('keeps metadata values out of messages', async () => {
    const echoed = await checkGrpc(
      target(ports.plain, { service: 'svc.echo', metadata: [{ name: 'x-api-key', value: API_KEY }] }),
      context(),
    );
    assert.deepEqual(echoed.error, { class: 'other', message: 'gRPC PERMISSION_DENIED: invalid key ***' });
    const invalid = await checkGrpc(target(ports.plain, { metadata: [{ name: 'bad name', value: API_KEY }] }), context());
    assert.deepEqual(invalid.error, { class: 'other', message: 'Invalid metadata name "bad name"' });
  });

  it('fails on a server without the health service', async () => {
    const out = await checkGrpc(target(ports.bare), context());
    assert.equal(out.status_code, status.UNIMPLEMENTED);
    assert.deepEqual(out.error, { class: 'status', message: 'The server does not implement grpc.health.v1' });
    assert.equal(out.observed.grpc_status, undefined);
  });

  it('reports a refused connection', async () => {
    const out = await checkGrpc(target(ports.closed), context());
    assert.equal(out.ok, false);
    assert.deepEqual(out.error, { class: 'refused', message: 'Connection refused' });
    assert.equal(out.timings.ttfb, 0);
  });

  it('reports a host name that does not resolve', async () => {
    const out = await checkGrpc(target(ports.plain, { host: 'nowhere.invalid' }), context());
    assert.equal(out.status_code, null);
    assert.deepEqual(out.error, { class: 'dns', message: 'DNS lookup failed for nowhere.invalid (ENOTFOUND)' });
  });

  it('times out on a server that never answers', async () => {
    const arrived = hangingCallArrived();
    const out = await checkGrpc(target(ports.hanging, { timeout_ms: 300 }), context());
    await arrived;
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 300 ms' });
  });

  it('times out while the host name resolves', async () => {
    const ctx = { ...context(), resolve: () => new Promise<ResolvedAddress[]>(() => {}) };
    const out = await checkGrpc(target(ports.plain, { host: 'grpc.test', timeout_ms: 100 }), ctx);
    assert.deepEqual(out.error, { class: 'timeout', message: 'Timed out after 100 ms' });
  });

  it('stops when its caller cancels it', async () => {
    const controller = new AbortController();
    const arrived = hangingCallArrived();
    const running = checkGrpc(target(ports.hanging), context(), controller.signal);
    await arrived;
    controller.abort();
    const out = await running;
    assert.deepEqual(out.error, { class: 'other', message: 'Check cancelled' });
    // The call itself was cancelled, not left to run out its deadline.
    assert.equal(out.status_code, status.CANCELLED);
    const early = await checkGrpc(target(ports.plain), context(), AbortSignal.abort());
    assert.deepEqual(early.error, { class: 'other', message: 'Check cancelled' });
    assert.equal(early.status_code, null);
  });

  describe('TLS', () => {
    it('verifies the certificate against the host name and reports it', async () => {
      const out = await checkGrpc(target(ports.tls, { host: 'grpc.test', tls: true, service: 'svc.A' }), context());
      assert.equal(out.error, null);
      assert.equal(out.observed.grpc_status, 'SERVING');
      const cert = out.details?.certificate;
      assert.ok(cert);
      assert.deepEqual(cert.sans, ['grpc.test']);
      assert.equal(cert.subject, 'CN=grpc.test');
      assert.equal(cert.issuer, 'CN=Uptime Test CA');
      assert.ok(cert.days_left > 88 && cert.days_left <= 90, String(cert.days_left));
      assert.equal(out.observed.certificate_days, cert.days_left);
    });

    it('fails on a certificate for another name, and reports it', async () => {
      const out = await checkGrpc(target(ports.tls, { host: 'wrong.test', tls: true }), context());
      assert.deepEqual(out.error, { class: 'tls', message: 'Certificate is not valid for wrong.test' });
      assert.deepEqual(out.details?.certificate?.sans, ['grpc.test']);
    });

    it('fails on an expired certificate', async () => {
      const out = await checkGrpc(target(ports.expired, { host: 'grpc.test', tls: true }), context());
      const cert = out.details?.certificate;
      assert.ok(cert);
      assert.deepEqual(out.error, { class: 'tls', message: `Certificate expired on ${cert.valid_to.slice(0, 10)}` });
      assert.ok(cert.days_left < -1 && cert.days_left > -3, String(cert.days_left));
      assert.equal(out.observed.certificate_days, cert.days_left);
    });

    it('fails on an untrusted chain', async () => {
      const out = await checkGrpc(target(ports.selfSigned, { host: 'grpc.test', tls: true }), context());
      assert.deepEqual(out.error, { class: 'tls', message: 'Certificate chain not trusted (DEPTH_ZERO_SELF_SIGNED_CERT)' });
      assert.equal(out.details?.certificate?.issuer, 'CN=grpc.test');
    });

    it('fails when the server does not speak TLS', async () => {
      const out = await checkGrpc(target(ports.plain, { host: 'grpc.test', tls: true }), context());
      assert.deepEqual(out.error, { class: 'tls', message: 'TLS error: wrong version number' });
    });
  });

  describe('address policy', () => {
    const blocked = { blockPrivateTargets: true };

    it('refuses a private address, literal or resolved', async () => {
      const calls = received.length;
      const literal = await checkGrpc(target(ports.plain), context(blocked));
      assert.deepEqual(literal.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
      assert.equal(literal.status_code, null);
      const named = await checkGrpc(target(ports.plain, { host: 'grpc.test' }), context(blocked));
      assert.deepEqual(named.error, { class: 'other', message: 'Target address 127.0.0.1 is not allowed' });
      assert.equal(received.length, calls);
    });

    it('dials an address the policy allows', async () => {
      const out = await checkGrpc(target(ports.plain, { host: 'grpc.test' }), context({ ...blocked, allowedAddresses: ['127.0.0.1'] }));
      assert.equal(out.ok, true);
    });
  });
});
