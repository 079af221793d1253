import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { buildApp } from '../../control-plane/src/runtime/app.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { freePort } from '../../control-plane/src/platform/embedded/ports.ts';
import { startNatsServer } from '../../control-plane/src/platform/embedded/nats-server.ts';
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts';
import { startAgent } from '../../probe-agent/src/agent.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { AgentPresence } from '../../shared/src/contracts/agent.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';

describe('control plane health', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
  });
  after(() => cp.stop());

  it('answers /healthz while alive', async () => {
    const res = await fetch(`${cp.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  it('answers /readyz 200 when Postgres and NATS answer', async () => {
    const res = await fetch(`${cp.url}/readyz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ready', checks: { postgres: 'ok', nats: 'ok' } });
  });

  it('gives every response a request id, and keeps the one a client sent', async () => {
    const a = await fetch(`${cp.url}/healthz`);
    assert.match(a.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const b = await fetch(`${cp.url}/healthz`, { headers: { 'x-request-id': 'trace-42' } });
    assert.equal(b.headers.get('x-request-id'), 'trace-42');
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await fetch(`${cp.url}/no/such/route`, { method: 'POST' });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { message: 'Not found' });
  });
});

describe('readiness when a dependency is down', () => {
  it('answers 503 naming the dependency, without hanging, when NATS and Postgres are gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uptime-nats-'));
    const server = await startNatsServer({ storeDir: dir, log: quietLog });
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    const sql = createSql(`postgres://nobody@127.0.0.1:${await freePort()}/none`, { log: quietLog, max: 1 });
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), sql, nc, log: quietLog, keys: deriveKeys(randomBytes(32)) });
    try {
      await server.stop();
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), {
        message: 'Not ready',
        status: 'unavailable',
        checks: { postgres: 'unavailable', nats: 'unavailable' },
      });
    } finally {
      await app.close();
      await nc.close();
      await sql.end({ timeout: 1 });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('probe agent', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
  });
  after(() => cp.stop());

  it('announces itself in KV agents, answers health checks, and leaves when stopped', async () => {
    const agent = await startAgent({ config: cp.config, nc: cp.nats.nc, log: quietLog, region: 'eu-west', agentId: 'a1', port: 0 });
    const kv = await openBucket(cp.nats.nc, cp.nats.names, 'agents', { replicas: 1 });
    try {
      const entry = await kv.get('eu-west.a1');
      assert.ok(entry);
      const presence = AgentPresence.parse(entry.json());
      assert.equal(presence.region, 'eu-west');
      assert.equal(presence.agent_id, 'a1');

      const health = await fetch(`${agent.url}/healthz`);
      assert.equal(health.status, 200);
      const ready = await fetch(`${agent.url}/readyz`);
      assert.deepEqual(await ready.json(), { status: 'ready', checks: { nats: 'ok' } });
    } finally {
      await agent.stop();
    }
    const gone = await kv.get('eu-west.a1');
    assert.ok(!gone || gone.operation !== 'PUT', 'presence removed on stop');
  });
});
