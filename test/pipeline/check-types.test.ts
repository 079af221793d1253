import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { apiClient, assertInvalid, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';

type Result = {
  ok: boolean;
  error: { class: string; message: string } | null;
  degraded?: boolean;
  assertions?: Array<{ source: string; passed: boolean; observed: unknown; message?: string }>;
  details?: { steps?: Array<{ name: string; ok: boolean }> };
};

/**
 * Check types and assertions through the whole pipeline: a monitor made through the API is
 * assigned with its sealed settings, checked by a real agent against a real server on loopback,
 * and its result (assertion outcomes, degraded, details) stored and served back.
 */
describe('check types and assertions, API to agent to stored result', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let api: Call;
  let target: Target;
  let tcp: Server;
  const tcpSockets = new Set<Socket>();

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    target = await startTarget({
      status: 200,
      body: '{"status":"ok","count":3,"token":"t-42"}',
      headers: { 'content-type': 'application/json' },
    });
    // A line protocol: PING gets +PONG.
    tcp = createServer((socket) => {
      tcpSockets.add(socket);
      socket.on('close', () => tcpSockets.delete(socket));
      socket.on('data', (d) => {
        if (d.toString().includes('PING')) socket.write('+PONG\r\n');
      });
    });
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    await create({ name: 'warm-up', url: `${target.url}/warm-up` });
    await eventually(async () => agent.stats().owned === 1, 'the region known to the assigner');
  });
  after(async () => {
    await agent.stop();
    for (const s of tcpSockets) s.destroy();
    tcp.close();
    await target.close();
    await cp.stop();
  });

  async function create(body: Record<string, unknown>) {
    const res = await api('POST', '/monitors', { project_id: ada.project_id, interval: 60, timeout: 5, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string };
  }
  const firstResult = (id: string) =>
    eventually(async () => ((await api('GET', `/monitors/${id}/results`)).body.data as Result[])[0], 'a stored result', 15_000, 50);

  it('an http monitor with a secret header and JSON assertions: the header reaches the target, every outcome is stored', async () => {
    const m = await create({
      name: 'json api',
      url: `${target.url}/health`,
      settings: { headers: [{ name: 'X-Api-Key', value: 'k-secret-1' }] },
      assertions: [
        { source: 'json', path: '$.status', operator: 'equals', target: 'ok' },
        { source: 'header', path: 'content-type', operator: 'contains', target: 'json' },
      ],
    });
    const r = await firstResult(m.id);
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(
      r.assertions?.map((a) => [a.source, a.passed, a.observed]),
      [
        ['json', true, 'ok'],
        ['header', true, 'application/json'],
      ],
    );
    const seen = target.requests.find((q) => q.url === '/health');
    assert.equal(seen?.headers['x-api-key'], 'k-secret-1');
  });

  it('a failing assertion fails the check with the observed value as its cause, and the monitor goes down with it', async () => {
    const m = await create({
      name: 'wrong status field',
      url: `${target.url}/wrong`,
      assertions: [{ source: 'json', path: '$.status', operator: 'equals', target: 'green' }],
    });
    const r = await firstResult(m.id);
    assert.equal(r.ok, false);
    assert.equal(r.error?.class, 'assertion');
    assert.equal(r.error?.message, 'Expected json $.status equals "green", got "ok"');
    const incidents = await eventually(async () => {
      const list = (await api('GET', `/monitors/${m.id}/incidents`)).body.data as Array<{ cause: string }>;
      return list.length > 0 && list;
    }, 'the incident');
    assert.match(incidents[0]!.cause, /Expected json \$\.status equals "green"/);
  });

  it('a failing degraded assertion keeps the check passing and marks it degraded', async () => {
    const m = await create({
      name: 'slow but up',
      url: `${target.url}/slow`,
      assertions: [{ source: 'response_time', operator: 'less_than', target: 0, severity: 'degraded' }],
    });
    const r = await firstResult(m.id);
    assert.equal(r.ok, true);
    assert.equal(r.degraded, true);
    // Up, but degraded: status 4, a degraded period (not an outage), and its event.
    const shown = await eventually(async () => {
      const body = (await api('GET', `/monitors/${m.id}`)).body.data as { status: number; degraded_regions: string[]; uptime: number };
      return body.status === 4 && body;
    }, 'the monitor degraded');
    assert.deepEqual(shown.degraded_regions, ['local']);
    assert.equal(shown.uptime, 100, 'degraded time is not downtime');
    const periods = (await api('GET', `/monitors/${m.id}/incidents`)).body.data as Array<{
      scope: string;
      cause: string;
      ended_at: string | null;
    }>;
    assert.deepEqual(
      periods.map((p) => [p.scope, p.cause, p.ended_at]),
      [['degraded', 'Expected response_time less than 0, got ' + JSON.stringify(r.assertions![0]!.observed), null]],
    );
    // Fixed: the edit is checked at once, the period closes and the monitor is up.
    await api('PUT', `/monitors/${m.id}`, {
      assertions: [{ source: 'response_time', operator: 'less_than', target: 60_000, severity: 'degraded' }],
    });
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 1, 'the monitor up again', 15_000, 50);
    const kinds = await cp.db.sql<{ kind: string }[]>`
      select kind from outbox_events where payload->'subject'->>'id' = ${m.id} and kind like 'monitor.%' order by created_at, kind`;
    assert.deepEqual(
      kinds.map((k) => k.kind),
      ['monitor.degraded', 'monitor.restored'],
    );
  });

  it('a tcp monitor sends and expects through its sealed settings', async () => {
    const port = (tcp.address() as AddressInfo).port;
    const m = await create({
      name: 'redis-ish',
      type: 'tcp',
      url: `tcp://127.0.0.1:${port}`,
      settings: { send: 'PING\r\n', expect: '+PONG' },
    });
    const r = await firstResult(m.id);
    assert.equal(r.ok, true, JSON.stringify(r));
    const bad = await create({
      name: 'wrong reply',
      type: 'tcp',
      url: `tcp://127.0.0.1:${port}`,
      settings: { send: 'PING\r\n', expect: 'HELLO' },
      timeout: 1,
    });
    const rb = await firstResult(bad.id);
    assert.equal(rb.ok, false);
    assert.match(rb.error?.message ?? '', /Expected "HELLO" not received/);
  });

  it('test now: a draft is checked once by an agent of the region, every assertion shown, nothing stored', async () => {
    const before = target.requests.length;
    const res = await api('POST', '/monitor-tests', {
      project_id: ada.project_id,
      name: 'draft',
      url: `${target.url}/draft`,
      region: 'local',
      assertions: [
        { source: 'json', path: '$.count', operator: 'equals', target: 3 },
        { source: 'json', path: '$.status', operator: 'equals', target: 'red' },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const t = res.body.data;
    assert.equal(t.region, 'local');
    assert.equal(t.ok, false);
    assert.equal(t.error.class, 'assertion');
    assert.deepEqual(
      t.assertions.map((a: { passed: boolean; observed: unknown }) => [a.passed, a.observed]),
      [
        [true, 3],
        [false, 'ok'],
      ],
    );
    assert.equal(target.requests.length, before + 1, 'one check, no re-check');
    const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from monitors where name = 'draft'`;
    assert.equal(row!.n, 0);
  });

  it('test now: a saved monitor is checked with its stored secrets; an unknown region is a 503', async () => {
    const m = await create({ name: 'saved', url: `${target.url}/saved`, settings: { headers: [{ name: 'X-Api-Key', value: 'k-saved' }] } });
    const res = await api('POST', `/monitors/${m.id}/test`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.ok, true);
    assert.equal(target.requests.filter((q) => q.url === '/saved').at(-1)?.headers['x-api-key'], 'k-saved');
    const nowhere = await api('POST', `/monitors/${m.id}/test?region=mars`);
    assert.equal(nowhere.status, 503);
    assert.equal(nowhere.body.message, 'No probe agent of region mars is connected.');
    assertInvalid(await api('POST', '/monitor-tests', { project_id: ada.project_id, name: 'x', url: 'tcp://nope', type: 'tcp' }), ['url']);
  });

  it('a multi-step check carries a value from one step to the next', async () => {
    const m = await create({
      name: 'login then read',
      type: 'multistep',
      url: `${target.url}/`,
      settings: {
        steps: [
          {
            name: 'log in',
            url: `${target.url}/login`,
            method: 'POST',
            body: '{"u":"probe"}',
            extract: [{ name: 'token', source: 'json', path: '$.token' }],
          },
          {
            name: 'read',
            url: `${target.url}/orders?token={{token}}`,
            assertions: [{ source: 'json', path: '$.count', operator: 'greater_than', target: 2 }],
          },
        ],
      },
    });
    const r = await firstResult(m.id);
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(
      r.details?.steps?.map((s) => [s.name, s.ok]),
      [
        ['log in', true],
        ['read', true],
      ],
    );
    const login = target.requests.find((q) => q.url === '/login');
    assert.equal(login?.method, 'POST');
    assert.equal(login?.body, '{"u":"probe"}');
    assert.ok(target.requests.some((q) => q.url === '/orders?token=t-42'));
  });
});
