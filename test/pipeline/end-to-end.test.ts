import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually, readStream } from '../harness/streams.ts';

/**
 * The whole monitor pipeline with real parts: the API writes a monitor, the assigner puts it in
 * KV, a probe agent checks a local target and publishes results, ingest derives status,
 * incidents and events. The agent runs 5x faster (a 5 s interval is a 1 s slot).
 */
describe('monitor pipeline end to end', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let api: Call;
  let target: Target;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest', 'deadline'] });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      pingPort: 0,
      timeScale: 0.2,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    target = await startTarget({ status: 200, body: 'ok' });
  });
  after(async () => {
    await agent.stop();
    await target.close();
    await cp.stop();
  });

  const monitor = async (id: string) => (await api('GET', `/monitors/${id}`)).body.data;

  it('follows a target from up to down and back, with one incident and one event per transition', async () => {
    const m = (
      await api('POST', '/monitors', {
        name: 'Local',
        url: `${target.url}/health`,
        project_id: ada.project_id,
        interval: 5,
        timeout: 2,
        basic_auth_username: 'probe',
        basic_auth_password: 's3cret',
      })
    ).body.data;
    await eventually(async () => (await monitor(m.id)).status === 1, 'monitor up', 20_000);
    const seen = await target.waitForRequests(1);
    assert.equal(seen[0]!.headers.authorization, `Basic ${Buffer.from('probe:s3cret').toString('base64')}`);
    assert.match(String(seen[0]!.headers['user-agent']), /^uptime-probe\//);

    target.respond({ status: 503, body: 'maintenance' });
    await eventually(async () => (await monitor(m.id)).status === 2, 'monitor down', 20_000);
    target.respond({ status: 200, body: 'ok' });
    await eventually(async () => (await monitor(m.id)).status === 1, 'monitor up again', 20_000);

    const read = await monitor(m.id);
    assert.equal(read.incidents_count, 1);
    assert.notEqual(read.last_checked, 'never');
    assert.ok(read.uptime < 100);
    const incidents = (await api('GET', `/monitors/${m.id}/incidents`)).body.data;
    assert.equal(incidents.length, 1);
    assert.match(incidents[0].cause, /503/);
    assert.notEqual(incidents[0].ended_at, null);

    const events = (await readStream(cp.nats.nc, cp.nats.names.streams.events)).filter((e) => e.data.subject.id === m.id);
    assert.deepEqual(
      events.map((e) => e.data.kind),
      ['monitor.down', 'monitor.up'],
    );

    const results = (await api('GET', `/monitors/${m.id}/results?per_page=100`)).body.data;
    const failed = results.find((r: { ok: boolean }) => !r.ok);
    assert.equal(failed.attempts, 2, 'a failure is re-checked before it counts');
    assert.deepEqual(failed.error.class, 'status');
    assert.ok(results.every((r: { timings: { total: number } }) => r.timings.total > 0));
  });

  it('exposes Prometheus metrics on the control plane and the agent', async () => {
    const agentMetrics = await (await fetch(`${agent.url}/metrics`)).text();
    assert.match(agentMetrics, /uptime_checks_total\{region="local",outcome="up"\} [1-9]/);
    assert.match(agentMetrics, /uptime_check_duration_seconds_bucket/);
    assert.match(agentMetrics, /uptime_schedule_lateness_seconds_count\{region="local"\} [1-9]/);
    assert.match(agentMetrics, /uptime_agent_results_buffered 0/);
    assert.match(agentMetrics, /uptime_agent_monitors_owned [1-9]/);
    const cpMetrics = await (await fetch(`${cp.url}/metrics`)).text();
    assert.match(cpMetrics, /uptime_http_requests_total\{server="api",route="\/monitors\/:id",method="GET",status="200"\} [1-9]/);
    assert.match(cpMetrics, /uptime_ingest_results_stored_total [1-9]/);
    assert.match(cpMetrics, /uptime_ingest_lag \d+/);
    assert.match(cpMetrics, /uptime_outbox_unpublished \d+/);
    assert.match(cpMetrics, /uptime_outbox_oldest_unpublished_seconds [\d.e+-]+/);
    assert.match(cpMetrics, /uptime_process_cpu_seconds_total/);
  });

  it('takes heartbeat pings at the regional edge, without Postgres, and the heartbeat comes up', async () => {
    const hb = (await api('POST', '/heartbeats', { name: 'nightly', project_id: ada.project_id })).body.data;
    const edge = `${agent.pingUrl}/heartbeat/${hb.id}`;
    // The edge knows ids from KV heartbeats, kept by the deadline role: wait for the id to arrive.
    await eventually(async () => (await fetch(edge, { method: 'HEAD' })).status === 200, 'edge accepts the new heartbeat');
    const res = await fetch(edge, { method: 'POST', body: 'backup done' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'OK');
    await eventually(async () => (await api('GET', `/heartbeats/${hb.id}`)).body.data.status === 'up', 'heartbeat up');
    const pings = (await api('GET', `/heartbeats/${hb.id}/pings`)).body.data;
    assert.ok(
      pings.some((p: { region: string | null }) => p.region === 'local'),
      'the ping log names the region',
    );
    assert.equal((await fetch(`${agent.pingUrl}/heartbeat/00000000-0000-4000-8000-000000000000`)).status, 404);
  });

  it('stops checking a paused monitor', async () => {
    const quiet = await startTarget();
    try {
      const m = (await api('POST', '/monitors', { name: 'Pausable', url: quiet.url, project_id: ada.project_id, interval: 5, timeout: 2 }))
        .body.data;
      await quiet.waitForRequests(1, 20_000);
      await api('PUT', `/monitors/${m.id}`, { active: false });
      await eventually(async () => agent.stats().assigned === 1, 'unassigned from the agent');
      const count = quiet.requests.length;
      // Two more slots pass on the busy monitor; the paused one gets none.
      const busy = target.requests.length;
      await target.waitForRequests(busy + 2, 20_000);
      assert.ok(quiet.requests.length <= count + 1, 'at most a check already in flight');
      assert.equal((await monitor(m.id)).status, 3);
    } finally {
      await quiet.close();
    }
  });
});
