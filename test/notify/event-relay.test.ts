import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { recordEvent } from '../../control-plane/src/platform/outbox.ts';
import type { NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { deliveryRows, domainEvent, eventsRead, publishEvent, queueDrained, startTestNotifyRole } from './helpers.ts';

/**
 * From EVENTS to deliveries. The consumer takes a backlog in batches, one transaction each. The
 * event relay: an alert event stored in the outbox and published, but never brought to the
 * notify role by EVENTS (a consumer that skipped a stored message), still gets its deliveries,
 * once, however many relays and consumers see it.
 */
describe('notify event relay', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let sink: Target;
  const roles: NotifyRole[] = [];

  const startRole = async () => {
    // The tests call the relays themselves.
    const role = await startTestNotifyRole(cp, { relayEveryMs: 3_600_000, eventsLostAfterMs: 60_000 });
    roles.push(role);
    return role;
  };

  /** An event in the outbox as the outbox leaves it: recorded, and published `publishedAgo` ms ago (or never). */
  const stored = async (kind: DomainEvent['kind'], opts: { publishedAgoMs: number | null; createdAgoMs?: number }) => {
    const e = domainEvent(ada.project_id, { kind, subject: { type: 'heartbeat', id: randomUUID(), name: 'backup' }, data: {} });
    await cp.db.sql.begin((tx) => recordEvent(tx, e));
    await cp.db.sql`
      update outbox_events set
        created_at = now() - ${opts.createdAgoMs ?? opts.publishedAgoMs ?? 0} * interval '1 millisecond',
        published_at = now() - ${opts.publishedAgoMs} * interval '1 millisecond'
      where id = ${e.id}`;
    return e;
  };
  const notifiedAt = async (id: string) =>
    (await cp.db.sql<{ notified_at: Date | null }[]>`select notified_at from outbox_events where id = ${id}`)[0]!.notified_at;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    sink = await startWebhookSink();
    const api = apiClient(cp.url, ada.token);
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/hook` } });
    await startRole();
    await startRole();
  });
  after(async () => {
    for (const r of roles) await r.stop();
    await sink.close();
    await cp.stop();
  });

  it('makes the deliveries of an alert event EVENTS never brought, once, with two notify processes relaying at the same time', async () => {
    const e = await stored('heartbeat.down', { publishedAgoMs: 5 * 60_000 });
    assert.equal(await notifiedAt(e.id), null);
    const counts = await Promise.all([roles[0]!.relayEvents(), roles[1]!.relayEvents()]);
    assert.ok(counts.includes(1), `relayed ${counts.join(' and ')}`);
    const [request] = await sink.waitForRequests(1);
    assert.equal(JSON.parse(request!.body).event, 'heartbeat.down');
    assert.notEqual(await notifiedAt(e.id), null);
    await queueDrained(cp);
    const rows = await deliveryRows(cp, e.id);
    assert.deepEqual(
      rows.map((r) => r.status),
      ['delivered'],
    );
    assert.equal(sink.requests.length, 1);
    assert.equal(await roles[0]!.relayEvents(), 0, 'nothing left to relay');
  });

  it('leaves alone alerts published less than a while ago, unpublished ones, those older than a day, and events that notify nobody', async () => {
    const recent = await stored('monitor.down', { publishedAgoMs: 10_000 });
    const unpublished = await stored('monitor.down', { publishedAgoMs: null, createdAgoMs: 5 * 60_000 });
    const old = await stored('monitor.up', { publishedAgoMs: 47 * 3_600_000, createdAgoMs: 48 * 3_600_000 });
    const started = await stored('heartbeat.started', { publishedAgoMs: 5 * 60_000 });
    assert.notEqual(await notifiedAt(started.id), null, 'an event that notifies nobody is written notified');
    assert.equal(await roles[0]!.relayEvents(), 0);
    for (const e of [recent, unpublished, old, started]) assert.equal((await deliveryRows(cp, e.id)).length, 0);
  });

  it('marks an outbox row no consumer could read, without deliveries, and reads it only once', async () => {
    const id = randomUUID();
    await cp.db.sql`
      insert into outbox_events (id, project_id, kind, payload, published_at)
      values (${id}, ${ada.project_id}, 'monitor.down', ${cp.db.sql.json({ id, kind: 'monitor.down' })}, now() - interval '5 minutes')`;
    assert.equal(await roles[0]!.relayEvents(), 1);
    assert.notEqual(await notifiedAt(id), null);
    assert.equal((await deliveryRows(cp, id)).length, 0);
    assert.equal(await roles[0]!.relayEvents(), 0);
  });

  it('does not make again what the EVENTS consumer made: the consumer marks the event in the same transaction', async () => {
    const before = sink.requests.length;
    const e = await stored('heartbeat.up', { publishedAgoMs: 0 });
    await publishEvent(cp, e);
    await eventsRead(cp);
    await sink.waitForRequests(before + 1);
    assert.notEqual(await notifiedAt(e.id), null);
    await cp.db.sql`update outbox_events set published_at = now() - interval '5 minutes' where id = ${e.id}`;
    assert.equal(await roles[0]!.relayEvents(), 0);
    await queueDrained(cp);
    assert.equal(sink.requests.length, before + 1);
    assert.equal((await deliveryRows(cp, e.id)).length, 1);
  });

  it('makes the deliveries of a backlog of 300 events in batches, each event once', async () => {
    const before = sink.requests.length;
    for (const r of roles.splice(0)) await r.stop();
    const burst = Array.from({ length: 300 }, (_, i) =>
      domainEvent(ada.project_id, { kind: 'heartbeat.down', subject: { type: 'heartbeat', id: randomUUID(), name: `job ${i}` }, data: {} }),
    );
    await Promise.all(burst.map((e) => publishEvent(cp, e)));
    const role = await startRole();
    await eventsRead(cp);
    await sink.waitForRequests(before + 300);
    await queueDrained(cp);
    assert.equal(sink.requests.length, before + 300);
    const [row] = await cp.db.sql<
      { n: number }[]
    >`select count(*)::int as n from deliveries where event_id = any(${`{${burst.map((e) => e.id).join(',')}}`}::uuid[])`;
    assert.equal(row!.n, 300);
    const { eventBatches } = role.stats();
    // 100 a fetch at most; taken as they come, so a fetch makes a few batches, never one per event.
    assert.ok(eventBatches >= 3 && eventBatches <= 30, `${eventBatches} transactions for 300 events`);
  });
});
