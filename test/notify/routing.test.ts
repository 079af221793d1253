import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { alertsRouted, deliveriesSettled, domainEvent, recordAlert } from './helpers.ts';

describe('who hears about monitor and heartbeat events', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sinks: Record<'a' | 'b' | 'off' | 'other', Target>;
  let ids: Record<'a' | 'b' | 'off', string>;

  const deliveriesOf = (eventId: string) =>
    cp.db.sql<{ integration_id: string }[]>`select integration_id from deliveries where event_id = ${eventId} order by integration_id`;
  const hook = async (projectId: string, name: string, sink: Target, active = true) =>
    (await api('POST', '/integrations', { project_id: projectId, name, type: 'webhook', active, config: { url: sink.url } })).body.data
      .id as string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'notify'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sinks = { a: await startWebhookSink(), b: await startWebhookSink(), off: await startWebhookSink(), other: await startWebhookSink() };
    ids = {
      a: await hook(ada.project_id, 'a', sinks.a),
      b: await hook(ada.project_id, 'b', sinks.b),
      off: await hook(ada.project_id, 'off', sinks.off, false),
    };
    const second = (await api('POST', '/projects', { name: 'Elsewhere' })).body.data.id;
    await hook(second, 'other', sinks.other);
  });
  after(async () => {
    for (const s of Object.values(sinks)) await s.close();
    await cp.stop();
  });

  it('sends an event of a resource without its own list to every active integration of its project', async () => {
    const e = domainEvent(ada.project_id, {
      kind: 'monitor.down',
      subject: { type: 'monitor', id: randomUUID(), name: 'm' },
      data: { cause: 'timeout' },
    });
    await recordAlert(cp, e);
    await sinks.a.waitForRequests(1);
    await sinks.b.waitForRequests(1);
    assert.deepEqual(
      (await deliveriesOf(e.id)).map((d) => d.integration_id),
      [ids.a, ids.b].sort(),
    );
  });

  it('sends an event of a monitor or heartbeat that names integrations to those only', async () => {
    const monitor = (
      await api('POST', '/monitors', {
        project_id: ada.project_id,
        name: 'Site',
        url: 'https://example.com/',
        integration_ids: [ids.b, ids.off],
      })
    ).body.data;
    const heartbeat = (await api('POST', '/heartbeats', { project_id: ada.project_id, name: 'Job', integration_ids: [ids.a] })).body.data;
    const m = domainEvent(ada.project_id, { kind: 'monitor.up', subject: { type: 'monitor', id: monitor.id, name: 'Site' }, data: {} });
    const h = domainEvent(ada.project_id, {
      kind: 'heartbeat.down',
      subject: { type: 'heartbeat', id: heartbeat.id, name: 'Job' },
      data: { reason: 'failed' },
    });
    await recordAlert(cp, m);
    await recordAlert(cp, h);
    await alertsRouted(cp);
    assert.deepEqual(
      (await deliveriesOf(m.id)).map((d) => d.integration_id),
      [ids.b],
    );
    assert.deepEqual(
      (await deliveriesOf(h.id)).map((d) => d.integration_id),
      [ids.a],
    );
  });

  it("never sends to a paused integration or to another project's", async () => {
    await alertsRouted(cp);
    await deliveriesSettled(cp);
    assert.equal(sinks.off.requests.length, 0);
    assert.equal(sinks.other.requests.length, 0);
  });

  it('creates one delivery per integration however often the same event is routed', async () => {
    const before = sinks.a.requests.length;
    const e = domainEvent(ada.project_id, { kind: 'heartbeat.up', subject: { type: 'heartbeat', id: randomUUID(), name: 'h' }, data: {} });
    await recordAlert(cp, e);
    await alertsRouted(cp);
    // As if a second router took the event again.
    await cp.db.sql`update outbox_events set notified_at = null where id = ${e.id}`;
    await alertsRouted(cp);
    await deliveriesSettled(cp);
    assert.equal((await deliveriesOf(e.id)).length, 2);
    assert.equal(sinks.a.requests.length, before + 1);
  });

  it('notifies nobody of late, started and fired events', async () => {
    const quiet = [
      domainEvent(ada.project_id, { kind: 'heartbeat.late', subject: { type: 'heartbeat', id: randomUUID(), name: 'h' }, data: {} }),
      domainEvent(ada.project_id, { kind: 'heartbeat.started', subject: { type: 'heartbeat', id: randomUUID(), name: 'h' }, data: {} }),
      domainEvent(ada.project_id, { kind: 'trigger.fired', subject: { type: 'trigger', id: randomUUID(), name: 't' }, data: {} }),
    ];
    for (const e of quiet) await recordAlert(cp, e);
    await alertsRouted(cp);
    for (const e of quiet) assert.equal((await deliveriesOf(e.id)).length, 0, e.kind);
  });

  it('leaves an outbox row that is not a valid event without deliveries, and goes on', async () => {
    const bad = randomUUID();
    await cp.db.sql`
      insert into outbox_events (id, project_id, kind, payload)
      values (${bad}, ${ada.project_id}, 'monitor.down', ${cp.db.sql.json({ id: 'nope', kind: 'monitor.down' })})`;
    const e = domainEvent(ada.project_id, {
      kind: 'monitor.down',
      subject: { type: 'monitor', id: randomUUID(), name: 'after' },
      data: {},
    });
    await recordAlert(cp, e);
    await alertsRouted(cp);
    assert.equal((await deliveriesOf(e.id)).length, 2);
    assert.equal((await deliveriesOf(bad)).length, 0);
  });

  it('leaves an event whose data nests too deeply to send without deliveries, and goes on', async () => {
    const deep = domainEvent(ada.project_id, {
      kind: 'monitor.down',
      subject: { type: 'monitor', id: randomUUID(), name: 'deep' },
      data: {},
    });
    // Written by hand, past what the event contract takes (64 levels) but within what Postgres stores.
    const text = JSON.stringify(deep).replace('"data":{}', `"data":{"a":${'['.repeat(100)}${']'.repeat(100)}}`);
    await cp.db.sql`
      insert into outbox_events (id, project_id, kind, payload) values (${deep.id}, ${ada.project_id}, 'monitor.down', ${text}::jsonb)`;
    const e = domainEvent(ada.project_id, {
      kind: 'monitor.down',
      subject: { type: 'monitor', id: randomUUID(), name: 'after deep' },
      data: {},
    });
    await recordAlert(cp, e);
    await alertsRouted(cp);
    assert.equal((await deliveriesOf(e.id)).length, 2);
    assert.equal((await deliveriesOf(deep.id)).length, 0);
  });
});
