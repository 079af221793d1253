import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { startNatsServer, type NatsServerHandle } from '../../control-plane/src/platform/embedded/nats-server.ts';
import { registerPingEdge, type HeartbeatLookup } from '../../shared/src/pings/edge.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { ensureStreams, openBucket } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually, readStream } from '../harness/streams.ts';

/** A ping edge on a Fastify of its own, as a probe agent mounts it on PING_PORT. */
async function startEdge(opts: Parameters<typeof registerPingEdge>[1]): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await registerPingEdge(app, opts);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

describe('a regional ping edge', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let kv: KV;
  let edge: { app: FastifyInstance; url: string };
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'deadline'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    kv = await openBucket(cp.nats.nc, cp.nats.names, 'heartbeats', { replicas: 1 });
    edge = await startEdge({
      nc: cp.nats.nc,
      names: cp.nats.names,
      region: 'eu-west',
      partitions: cp.config.PING_PARTITIONS,
      heartbeats: kv,
    });
  });
  after(async () => {
    await edge.app.close();
    await cp.stop();
  });

  const ping = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${edge.url}${path}`, init);
    return { status: res.status, text: await res.text() };
  };

  it('takes pings for a heartbeat as soon as the deadline role has put it in KV, and names its region', async () => {
    const hb = (await api('POST', '/heartbeats', { name: 'Import', project_id: ada.project_id })).body.data;
    await eventually(async () => (await ping(`/heartbeat/${hb.id}/start`)).status === 200, 'the edge accepts the new heartbeat');
    const [sent] = await readStream(
      cp.nats.nc,
      cp.nats.names.streams.pings,
      cp.nats.names.subjects.ping(pingPartition(hb.id, cp.config.PING_PARTITIONS), hb.id),
    );
    assert.equal(sent!.data.region, 'eu-west');
    assert.equal(sent!.data.kind, 'start');
    const log = await eventually(async () => {
      const body = (await api('GET', `/heartbeats/${hb.id}/pings`)).body;
      return body.meta.total === 1 && body;
    }, 'the ping logged');
    assert.equal(log.data[0].region, 'eu-west');
  });

  it('refuses a heartbeat beyond its rate at this edge with 429 and Retry-After, after the id check', async () => {
    const hb = (await api('POST', '/heartbeats', { name: 'Looping', project_id: ada.project_id })).body.data;
    const strict = await startEdge({
      nc: cp.nats.nc,
      names: cp.nats.names,
      region: 'eu-west',
      partitions: cp.config.PING_PARTITIONS,
      heartbeats: kv,
      perHeartbeatPerMinute: 3,
    });
    try {
      await eventually(async () => (await ping(`/heartbeat/${hb.id}`)).status === 200, 'the regional edge accepts the heartbeat');
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(`${strict.url}/heartbeat/${hb.id}`)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
      const refused = await fetch(`${strict.url}/heartbeat/${hb.id}`);
      assert.equal(refused.headers.get('retry-after'), '20', 'one ping every 20 s at 3 a minute');
      assert.equal((await fetch(`${strict.url}/heartbeat/${randomUUID()}`)).status, 404, 'an unknown id is still 404');
    } finally {
      await strict.app.close();
    }
  });

  it('answers from KV alone: 404 for an id it does not hold', async () => {
    assert.deepEqual(await ping(`/heartbeat/${randomUUID()}`), { status: 404, text: 'Not found' });
    assert.equal((await ping('/heartbeat/nonsense')).status, 404);
  });

  it('refuses pings once the heartbeat is deleted', async () => {
    const hb = (await api('POST', '/heartbeats', { name: 'Gone', project_id: ada.project_id })).body.data;
    await eventually(async () => (await ping(`/heartbeat/${hb.id}`)).status === 200, 'accepted while it exists');
    await api('DELETE', `/heartbeats/${hb.id}`);
    await eventually(async () => (await ping(`/heartbeat/${hb.id}`)).status === 404, 'refused once deleted');
  });

  it('loses a KV entry without a heartbeat once a ping for it reaches the deadline role', async () => {
    const ghost = randomUUID();
    await kv.put(ghost, JSON.stringify({ project_id: ada.project_id }));
    assert.equal((await ping(`/heartbeat/${ghost}`)).status, 200);
    await eventually(async () => (await kv.get(ghost))?.operation !== 'PUT', 'the stale key removed');
    assert.equal((await ping(`/heartbeat/${ghost}`)).status, 404);
  });
});

describe('a ping edge with request logging on', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
  });
  after(() => cp.stop());

  /** An edge whose Fastify logs at info into `lines`. */
  const loggedEdge = async (lookup: HeartbeatLookup) => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = Fastify({ loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger });
    await registerPingEdge(app, { nc: cp.nats.nc, names: cp.nats.names, region: 'eu-west', partitions: cp.config.PING_PARTITIONS, lookup });
    return { app, lines };
  };

  it('writes no access-log line for a ping', async () => {
    const { app, lines } = await loggedEdge(async (ids) => ids);
    assert.equal((await app.inject({ method: 'GET', url: `/heartbeat/${randomUUID()}` })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/heartbeat/nonsense' })).statusCode, 404);
    await app.close();
    assert.deepEqual(lines, []);
  });

  it('still logs a ping it refuses, as a warning', async () => {
    const { app, lines } = await loggedEdge(() => Promise.reject(new Error('store away')));
    assert.equal((await app.inject({ method: 'GET', url: `/heartbeat/${randomUUID()}` })).statusCode, 503);
    await app.close();
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [[40, 'ping refused: heartbeat lookup failed']],
    );
  });
});

describe('a regional ping edge while NATS is away', () => {
  let dir: string;
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let edge: { app: FastifyInstance; url: string };
  const names = natsNames(`edge${randomUUID().slice(0, 8)}`);
  const id = randomUUID();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'uptime-edge-'));
    server = await startNatsServer({ storeDir: dir, log: quietLog });
    nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    await ensureStreams(nc, names, { replicas: 1 });
    const kv = await openBucket(nc, names, 'heartbeats', { replicas: 1 });
    await kv.put(id, JSON.stringify({ project_id: randomUUID() }));
    edge = await startEdge({ nc, names, region: 'ap-south', partitions: 16, heartbeats: kv, publishBudgetMs: 500, lookupTimeoutMs: 500 });
  });
  after(async () => {
    await edge.app.close();
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After rather than a 200 it cannot keep, and 200 again once NATS is back', async () => {
    assert.equal((await fetch(`${edge.url}/heartbeat/${id}`)).status, 200);
    const port = server.port;
    await server.stop();
    const res = await fetch(`${edge.url}/heartbeat/${id}`);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(await res.text(), 'Service temporarily unavailable');

    server = await startNatsServer({ storeDir: dir, log: quietLog, port });
    await eventually(async () => (await fetch(`${edge.url}/heartbeat/${id}`)).status === 200, 'accepted again', 15_000, 200);
    const stored = await readStream(nc, names.streams.pings);
    assert.ok(stored.length >= 2, 'the pings answered 200 are in the stream');
  });
});
