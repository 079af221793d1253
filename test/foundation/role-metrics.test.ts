import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createSql, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { quietLog } from '../harness/db.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { isoIn, startDeadlinePlane, type DeadlinePlane } from '../heartbeats/deadline-helpers.ts';

/** The value of one series of a Prometheus text exposition, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/**
 * A process running the deadline and notify roles without the api role, next to one that runs
 * only the api role: the first has a listener of its own for probes and scrapes.
 */
describe('metrics and health of a process without the api role', () => {
  let plane: DeadlinePlane;
  let nc: NatsConnection | undefined;
  let sql: Sql | undefined;
  let roles: RunningControlPlane | undefined;
  const targets: Target[] = [];
  const scrape = async () => {
    const res = await fetch(`${roles!.metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    return res.text();
  };

  before(async () => {
    plane = await startDeadlinePlane({ roles: ['api'], env: { NOTIFY_MAX_ATTEMPTS: '2' } });
    nc = await connect({ servers: plane.nats.url, name: 'deadline-and-notify-process' });
    sql = createSql(plane.db.url, { log: quietLog, max: 4 });
    roles = await startControlPlane({
      config: plane.config,
      log: quietLog,
      sql,
      nc,
      roles: ['deadline', 'notify'],
      port: 0,
      clock: plane.clock,
      notify: { backoffBaseMs: 50, backoffCapMs: 50, pollMs: 100 },
    });
  });

  after(async () => {
    await roles?.stop();
    await nc?.close();
    await sql?.end({ timeout: 5 });
    for (const t of targets) await t.close();
    await plane?.stop();
  });

  it('answers /healthz, /readyz and /metrics on a listener of its own', async () => {
    assert.equal(roles!.url, undefined, 'no API');
    assert.notEqual(roles!.metricsUrl, plane.url);
    const health = await fetch(`${roles!.metricsUrl}/healthz`);
    assert.equal(health.status, 200);
    const ready = await fetch(`${roles!.metricsUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { postgres: 'ok', nats: 'ok' } });
    assert.equal((await fetch(`${roles!.metricsUrl}/monitors`)).status, 404, 'nothing but probes and metrics');

    const text = await scrape();
    assert.match(text, /^uptime_process_cpu_seconds_total /m);
    assert.match(text, /^uptime_http_requests_total\{server="ops",route="\/readyz",method="GET",status="200"\} 1$/m);
    const partitions = plane.config.PING_PARTITIONS;
    await eventually(async () => sample(await scrape(), 'uptime_deadline_partitions_owned') === partitions, 'every partition held');
  });

  it('counts armed deadlines by partition and how late each fired', async () => {
    const res = await plane.api('POST', '/heartbeats', {
      name: 'Nightly backup',
      project_id: plane.account.project_id,
      next_ping_at: isoIn(plane.clock, 2_000),
      grace_period: 60,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const id: string = res.body.data.id;
    const armed = `uptime_deadline_heartbeats_armed{partition="${pingPartition(id, plane.config.PING_PARTITIONS)}"}`;
    await eventually(async () => sample(await scrape(), armed) === 1, 'the deadline armed');
    const before = await scrape();
    const deadlineSeries = () =>
      before
        .split('\n')
        .filter((l) => l.startsWith('uptime_deadline'))
        .join('\n');
    assert.equal(sample(before, 'uptime_deadline_lateness_seconds_count'), 0, deadlineSeries());
    const perPartition = [...before.matchAll(/^uptime_deadline_heartbeats_armed\{partition="\d+"\} (\d+)$/gm)];
    assert.equal(
      perPartition.length,
      sample(before, 'uptime_deadline_partitions_owned'),
      `one series per partition held:\n${deadlineSeries()}`,
    );
    assert.equal(
      perPartition.reduce((n, m) => n + Number(m[1]), 0),
      1,
      deadlineSeries(),
    );

    plane.clock.advance(2_001);
    await eventually(async () => (await plane.events(id)).some((e) => e.kind === 'heartbeat.late'), 'the heartbeat late');
    const after = await scrape();
    // A step that read the heartbeat before the clock moved may arm the same instant again once
    // it ends, and the deadline fires a second time (the step it causes finds nothing to do).
    const fired = sample(after, 'uptime_deadline_lateness_seconds_count')!;
    assert.ok(fired >= 1, deadlineSeries());
    assert.equal(
      sample(after, 'uptime_deadline_lateness_seconds_bucket{le="0.001"}'),
      fired,
      'fired 1 ms after it came due, on the test clock',
    );
    // Late now: the next deadline is the end of its grace period.
    assert.equal(sample(after, armed), 1);
  });

  it('counts notification deliveries by channel and outcome', async () => {
    const ok = await startTarget({ status: 200, body: '{}' });
    const failing = await startTarget({ status: 500, body: 'no' });
    targets.push(ok, failing);
    const hook = async (url: string) =>
      (await plane.api('POST', '/integrations', { project_id: plane.account.project_id, name: 'hook', type: 'webhook', config: { url } }))
        .body.data.id as string;
    const integrationIds = [await hook(ok.url), await hook(failing.url)];
    const trigger = (
      await plane.api('POST', '/triggers', {
        project_id: plane.account.project_id,
        name: 'Jobs',
        default_message: 'done',
        integration_ids: integrationIds,
      })
    ).body.data;
    const series = (status: string) => `uptime_notify_deliveries_total{channel="webhook",status="${status}"}`;
    assert.equal(sample(await scrape(), series('delivered')), undefined, 'nothing delivered yet');

    assert.equal((await fetch(`${plane.url}/api/notify/${trigger.id}`, { method: 'POST' })).status, 202);
    await eventually(async () => sample(await scrape(), series('dead')) === 1, 'the failing delivery given up');
    const text = await scrape();
    assert.equal(sample(text, series('delivered')), 1);
    // NOTIFY_MAX_ATTEMPTS=2: one failure retried, the second one dead.
    assert.equal(sample(text, series('retried')), 1);
    assert.equal(ok.requests.length, 1);
    assert.equal(failing.requests.length, 2);
  });
});
