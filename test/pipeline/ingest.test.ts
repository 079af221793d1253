import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ingestLag } from '../../control-plane/src/monitors/ingest/consumer.ts';
import { resultMsgId, type CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually, publishJson, readStream } from '../harness/streams.ts';

function result(monitorId: string, region: string, scheduledAt: Date, ok: boolean, extra: Partial<CheckResult> = {}): CheckResult {
  return {
    monitor_id: monitorId,
    region,
    agent_id: `agent-${region}`,
    scheduled_at: scheduledAt.toISOString(),
    checked_at: scheduledAt.toISOString(),
    ok,
    status_code: ok ? 200 : 503,
    timings: { dns: 1, connect: 2, tls: 0, ttfb: 5, total: 9 },
    error: ok ? null : { class: 'status', message: 'Unexpected status 503' },
    attempts: ok ? 1 : 2,
    ...extra,
  };
}

describe('result ingest', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'ingest'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const publish = (r: CheckResult) => publishJson(cp.nats.nc, cp.nats.names.subjects.result(r.region, r.monitor_id), r, resultMsgId(r));
  const stored = (id: string) => cp.db.sql`select * from check_results where monitor_id = ${id}`;
  const events = (id: string) =>
    readStream(cp.nats.nc, cp.nats.names.streams.events).then((all) => all.filter((e) => e.data.subject.id === id));

  it('drives a monitor up, down and up again with one incident and one event per transition', async () => {
    const m = (await api('POST', '/monitors', { name: 'Shop', url: 'https://shop.example', project_id: ada.project_id })).body.data;
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000);

    await publish(result(m.id, 'local', at(0), true));
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 1, 'status up');
    assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.last_checked !== 'never', true);

    await publish(result(m.id, 'local', at(60), false));
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 2, 'status down');
    await publish(result(m.id, 'local', at(120), false));
    await publish(result(m.id, 'local', at(180), true));
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 1, 'status up again');

    const incidents = (await api('GET', `/monitors/${m.id}/incidents`)).body;
    assert.equal(incidents.meta.total, 1);
    assert.equal(incidents.data[0].cause, 'Unexpected status 503');
    assert.deepEqual(incidents.data[0].regions, ['local']);
    assert.equal(incidents.data[0].duration, 120);
    const read = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.equal(read.incidents_count, 1);
    assert.equal(read.last_incident_duration, 120);

    const published = await eventually(async () => {
      const e = await events(m.id);
      return e.length >= 2 && e;
    }, 'events');
    assert.deepEqual(
      published.map((e) => e.data.kind),
      ['monitor.down', 'monitor.up'],
    );
    assert.equal(published[0]!.subject, cp.nats.names.subjects.event(ada.project_id, 'monitor.down'));
    assert.equal(published[0]!.msgId, published[0]!.data.id);
    assert.equal(published[1]!.data.data.duration_seconds, 120);

    const results = (await api('GET', `/monitors/${m.id}/results`)).body;
    assert.equal(results.meta.total, 4);
    assert.equal(results.data[0].ok, true, 'newest first');
    assert.deepEqual(results.data[1].error, { class: 'status', message: 'Unexpected status 503' });
  });

  it('stores a redelivered result once and changes nothing', async () => {
    const m = (await api('POST', '/monitors', { name: 'Api', url: 'https://api.example', project_id: ada.project_id })).body.data;
    const r = result(m.id, 'local', new Date(), false);
    await publish(r);
    await eventually(async () => (await stored(m.id)).length === 1, 'first copy stored');
    // Past the server's duplicate window: a copy with another msg id, as a replay would be.
    await publishJson(cp.nats.nc, cp.nats.names.subjects.result('local', m.id), r, `${resultMsgId(r)}-replay`);
    await publish(result(m.id, 'local', new Date(Date.now() + 60_000), false));
    await eventually(async () => (await stored(m.id)).length === 2, 'second slot stored');
    const [n] = await cp.db.sql`select count(*)::int as n from incidents where monitor_id = ${m.id}`;
    assert.equal(n!.n, 1);
    const [roll] = await cp.db.sql`select sum(checks)::int as checks from check_rollups where monitor_id = ${m.id}`;
    assert.equal(roll!.checks, 2);
    assert.equal((await events(m.id)).filter((e) => e.data.kind === 'monitor.down').length, 1);
  });

  it('needs a quorum of regions: one of three failing is a regional incident only, two of three is an outage', async () => {
    const m = (
      await api('POST', '/monitors', { name: 'Global', url: 'https://g.example', project_id: ada.project_id, regions: ['eu', 'us', 'ap'] })
    ).body.data;
    // A minute ago: eu's failure has lasted past the grace a regional incident waits for.
    const t = new Date(Date.now() - 60_000);
    await publish(result(m.id, 'eu', t, false));
    await publish(result(m.id, 'us', t, true));
    await publish(result(m.id, 'ap', t, true));
    await eventually(async () => (await stored(m.id)).length === 3, 'three results');
    const read = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.equal(read.status, 1);
    assert.deepEqual(read.failing_regions, ['eu']);
    const [regional] = (await api('GET', `/monitors/${m.id}/incidents`)).body.data;
    assert.deepEqual([regional.scope, regional.regions, regional.ended_at], ['regional', ['eu'], null]);
    const t2 = new Date(t.getTime() + 60_000);
    await publish(result(m.id, 'eu', t2, false));
    await publish(result(m.id, 'us', t2, false));
    await eventually(async () => (await api('GET', `/monitors/${m.id}`)).body.data.status === 2, 'down with 2 of 3');
    const incidents = (await api('GET', `/monitors/${m.id}/incidents`)).body.data;
    assert.deepEqual(
      incidents.map((i: { scope: string; regions: string[] }) => [i.scope, i.regions]),
      [
        ['global', ['eu', 'us']],
        ['regional', ['eu']],
      ],
      'the outage, and the regional incident it ended',
    );
    assert.notEqual(incidents[1].ended_at, null);
    assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.incidents_count, 1, 'only outages count');
  });

  it('terminates a message that is not a result without stopping', async () => {
    const m = (await api('POST', '/monitors', { name: 'After', url: 'https://after.example', project_id: ada.project_id })).body.data;
    await publishJson(cp.nats.nc, cp.nats.names.subjects.result('local', m.id), { nonsense: true });
    await cp.nats.nc.publish(cp.nats.names.subjects.result('local', m.id), 'not json');
    await publish(result(m.id, 'local', new Date(), true));
    await eventually(async () => (await stored(m.id)).length === 1, 'the valid result after the bad ones');
  });

  it('terminates a result the database refuses and stores the rest of its batch', async () => {
    const m = (await api('POST', '/monitors', { name: 'Year zero', url: 'https://zero.example', project_id: ada.project_id })).body.data;
    const t = Date.now();
    // Valid by the schema, but no Postgres timestamp: the whole batch fails until it is split.
    await publish(result(m.id, 'eu', new Date(t), true, { scheduled_at: '0000-01-01T00:00:00Z' }));
    for (let i = 1; i <= 3; i++) await publish(result(m.id, 'eu', new Date(t + i * 60_000), true));
    await eventually(async () => (await stored(m.id)).length === 3, 'the other results of the batch');
    await eventually(async () => (await ingestLag(cp.nats.nc, cp.nats.names)) === 0, 'nothing left to redeliver');
    await publish(result(m.id, 'eu', new Date(t + 4 * 60_000), true));
    await eventually(async () => (await stored(m.id)).length === 4, 'results after it');
  });

  it('drops results of a deleted monitor', async () => {
    const m = (await api('POST', '/monitors', { name: 'Gone', url: 'https://gone.example', project_id: ada.project_id })).body.data;
    await api('DELETE', `/monitors/${m.id}`);
    await publish(result(m.id, 'local', new Date(), false));
    const other = (await api('POST', '/monitors', { name: 'Next', url: 'https://next.example', project_id: ada.project_id })).body.data;
    await publish(result(other.id, 'local', new Date(), true));
    await eventually(async () => (await stored(other.id)).length === 1, 'later result stored');
    assert.equal((await stored(m.id)).length, 0);
  });
});
