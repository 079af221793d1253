import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import type { NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { alertsRouted, deliveriesSettled, deliveryRows, domainEvent, recordAlert, startTestNotifyRole } from './helpers.ts';

/**
 * From the outbox to deliveries. An alert event waits in the outbox table until a router has made
 * its deliveries: recorded while no notify role runs, it is routed once one starts; with several
 * notify processes, each event is routed once; a backlog goes in batches, one transaction each.
 */
describe('notify router', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let sink: Target;
  const roles: NotifyRole[] = [];

  const startRole = async () => {
    const role = await startTestNotifyRole(cp);
    roles.push(role);
    return role;
  };
  const stopRoles = async () => {
    for (const r of roles.splice(0)) await r.stop();
  };
  const alert = (kind: DomainEvent['kind'], name = 'backup') =>
    domainEvent(ada.project_id, { kind, subject: { type: 'heartbeat', id: randomUUID(), name }, data: {} });
  const notifiedAt = async (id: string) =>
    (await cp.db.sql<{ notified_at: Date | null }[]>`select notified_at from outbox_events where id = ${id}`)[0]!.notified_at;
  const routed = () => roles.reduce((n, r) => n + r.stats().router.events, 0);

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    sink = await startWebhookSink();
    const api = apiClient(cp.url, ada.token);
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/hook` } });
  });
  after(async () => {
    await stopRoles();
    await sink.close();
    await cp.stop();
  });

  it('routes an alert recorded while no notify role ran once one starts, once, with two notify processes at the same time', async () => {
    const e = alert('heartbeat.down');
    await recordAlert(cp, e);
    assert.equal(await notifiedAt(e.id), null);
    await Promise.all([startRole(), startRole()]);
    const [request] = await sink.waitForRequests(1);
    assert.equal(JSON.parse(request!.body).event, 'heartbeat.down');
    await alertsRouted(cp);
    await deliveriesSettled(cp);
    assert.deepEqual(
      (await deliveryRows(cp, e.id)).map((r) => r.status),
      ['delivered'],
    );
    assert.equal(sink.requests.length, 1);
    assert.equal(routed(), 1);
    assert.deepEqual(await Promise.all(roles.map((r) => r.route())), [0, 0], 'nothing left to route');
  });

  it('writes events that notify nobody as notified, and makes them no deliveries', async () => {
    const quiet = [alert('heartbeat.started'), alert('heartbeat.late')];
    for (const e of quiet) await recordAlert(cp, e);
    for (const e of quiet) assert.notEqual(await notifiedAt(e.id), null, e.kind);
    assert.equal(await roles[0]!.route(), 0);
    for (const e of quiet) assert.equal((await deliveryRows(cp, e.id)).length, 0);
  });

  it('marks an outbox row no one can read, without deliveries, and reads it only once', async () => {
    await stopRoles();
    const id = randomUUID();
    await cp.db.sql`
      insert into outbox_events (id, project_id, kind, payload)
      values (${id}, ${ada.project_id}, 'monitor.down', ${cp.db.sql.json({ id, kind: 'monitor.down' })})`;
    const role = await startRole();
    await alertsRouted(cp);
    assert.notEqual(await notifiedAt(id), null);
    assert.equal((await deliveryRows(cp, id)).length, 0);
    assert.equal(role.stats().router.invalid, 1);
    assert.equal(await role.route(), 0);
  });

  it('makes the deliveries of a backlog of 300 events in batches, each event once', async () => {
    const before = sink.requests.length;
    await stopRoles();
    const burst = Array.from({ length: 300 }, (_, i) => alert('heartbeat.down', `job ${i}`));
    await Promise.all(burst.map((e) => recordAlert(cp, e)));
    const role = await startRole();
    await alertsRouted(cp);
    await sink.waitForRequests(before + 300);
    await deliveriesSettled(cp);
    assert.equal(sink.requests.length, before + 300);
    const [row] = await cp.db.sql<
      { n: number }[]
    >`select count(*)::int as n from deliveries where event_id = any(${`{${burst.map((e) => e.id).join(',')}}`}::uuid[])`;
    assert.equal(row!.n, 300);
    const { batches } = role.stats().router;
    // 500 events a transaction at most: a backlog costs a few transactions, never one per event.
    assert.ok(batches >= 1 && batches <= 30, `${batches} transactions for 300 events`);
  });
});
