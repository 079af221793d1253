import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { startNotifyRole, type NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { domainEvent, recordAlert } from '../notify/helpers.ts';

/**
 * The router and maintenance windows: an alert that occurs inside a window covering its subject
 * is held, released when the window ends if the subject is still down, dropped otherwise; an up
 * is sent only when its down was. Real Postgres, a real notify role, a webhook sink.
 */
describe('alerts in maintenance windows', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  const roles: NotifyRole[] = [];
  // The clock the notify roles judge release times by; the events carry their own occurred_at.
  let clock = Date.now();

  const startRole = async () => {
    const role = await startNotifyRole({
      sql: cp.db.sql,
      log: quietLog,
      config: cp.config,
      keys: cp.cp.keys,
      pollMs: 60_000,
      now: () => new Date(clock),
    });
    roles.push(role);
    return role;
  };
  const at = (offsetMs: number) => new Date(clock + offsetMs).toISOString();
  const window = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/maintenance-windows', { name: 'Upgrade', project_id: ada.project_id, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const heartbeat = async (name: string) => {
    const res = await api('POST', '/heartbeats', { name, project_id: ada.project_id, grace_period: 60 });
    return { type: 'heartbeat' as const, id: res.body.data.id as string, name };
  };
  const monitor = async (name: string) => {
    const res = await api('POST', '/monitors', { name, url: 'https://example.com', project_id: ada.project_id });
    return { type: 'monitor' as const, id: res.body.data.id as string, name };
  };
  const setHeartbeatStatus = (id: string, status: string) => cp.db.sql`update heartbeats set status = ${status} where id = ${id}`;
  const openIncident = async (monitorId: string) =>
    (await cp.db.sql<{ id: string }[]>`insert into incidents (monitor_id, started_at) values (${monitorId}, now()) returning id`)[0]!.id;
  const closeIncident = (id: string) => cp.db.sql`update incidents set ended_at = now() where id = ${id}`;
  const alert = async (
    kind: DomainEvent['kind'],
    subject: DomainEvent['subject'],
    occurred_at: string,
    data: Record<string, unknown> = {},
  ) => {
    const e = domainEvent(ada.project_id, { kind, subject, data, occurred_at });
    await recordAlert(cp, e);
    return e;
  };
  const deliveries = async (eventId: string) =>
    (await cp.db.sql<{ n: number }[]>`select count(*)::int as n from deliveries where event_id = ${eventId}`)[0]!.n;
  const heldStatus = async (eventId: string) =>
    (await cp.db.sql<{ status: string }[]>`select status from held_alerts where event_id = ${eventId}`)[0]?.status;

  /** Routes until no alert waits (the role's own loop may be routing at the same time). */
  const settle = () =>
    eventually(async () => {
      await roles[0]!.route();
      const [row] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from outbox_events where notified_at is null`;
      return row!.n === 0;
    }, 'the alerts to be routed');
  /** Routes until the held row has this status. */
  const until = (eventId: string, status: string) =>
    eventually(async () => {
      await roles[0]!.route();
      return (await heldStatus(eventId)) === status;
    }, `held alert ${status}`);

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/hook` } });
    await startRole();
  });
  after(async () => {
    for (const r of roles.splice(0)) await r.stop();
    await sink.close();
    await cp.stop();
  });

  it('holds a down inside a window, and sends it when the window ends while the heartbeat is still down', async () => {
    clock = Date.now();
    const hb = await heartbeat('backup');
    await window({ starts_at: at(-60_000), ends_at: at(600_000), heartbeat_ids: [hb.id] });
    await setHeartbeatStatus(hb.id, 'down');
    const down = await alert('heartbeat.down', hb, at(1_000));
    await settle();
    assert.equal(await heldStatus(down.id), 'held');
    assert.equal(await deliveries(down.id), 0, 'nothing sent during the window');

    clock += 300_000;
    await roles[0]!.route();
    assert.equal(await heldStatus(down.id), 'held', 'still inside the window');

    clock += 301_000;
    await until(down.id, 'released');
    assert.equal(await deliveries(down.id), 1);
    const [request] = await sink.waitForRequests(1);
    assert.equal(JSON.parse(request!.body).event, 'heartbeat.down');
    // Its up is sent too, since its down was.
    await setHeartbeatStatus(hb.id, 'up');
    const up = await alert('heartbeat.up', hb, at(1_000));
    await settle();
    assert.equal(await deliveries(up.id), 1);
  });

  it('sends nothing for a monitor that goes down and recovers inside a window', async () => {
    clock = Date.now();
    const m = await monitor('api');
    await window({ starts_at: at(-60_000), ends_at: at(600_000), monitor_ids: [m.id] });
    const incident = await openIncident(m.id);
    const down = await alert('monitor.down', m, at(1_000), { incident_id: incident });
    await settle();
    await closeIncident(incident);
    const up = await alert('monitor.up', m, at(120_000), { incident_id: incident });
    await settle();
    clock += 700_000;
    await roles[0]!.route();
    assert.equal(await heldStatus(down.id), 'recovered');
    assert.equal(await deliveries(down.id), 0);
    assert.equal(await deliveries(up.id), 0);
  });

  it('drops a held down whose monitor recovered before the end, and its up routed after the end', async () => {
    clock = Date.now();
    const m = await monitor('cdn');
    await window({ starts_at: at(-60_000), ends_at: at(60_000), monitor_ids: [m.id] });
    const incident = await openIncident(m.id);
    const down = await alert('monitor.down', m, at(1_000), { incident_id: incident });
    await settle();
    await closeIncident(incident);
    clock += 120_000;
    await until(down.id, 'dropped');
    const up = await alert('monitor.up', m, at(-30_000), { incident_id: incident });
    await settle();
    assert.equal(await heldStatus(down.id), 'recovered');
    assert.equal(await deliveries(down.id), 0);
    assert.equal(await deliveries(up.id), 0);
  });

  it('sends the up of a down sent before the window, even inside it', async () => {
    clock = Date.now();
    const m = await monitor('db');
    const incident = await openIncident(m.id);
    const down = await alert('monitor.down', m, at(-120_000), { incident_id: incident });
    await settle();
    assert.equal(await deliveries(down.id), 1);
    await window({ starts_at: at(-60_000), ends_at: at(600_000), monitor_ids: [m.id] });
    await closeIncident(incident);
    const up = await alert('monitor.up', m, at(1_000), { incident_id: incident });
    await settle();
    assert.equal(await deliveries(up.id), 1);
  });

  it('decides by the event’s occurred_at: a down from inside a window routed after it ends is held, then released at once', async () => {
    clock = Date.now();
    const hb = await heartbeat('report');
    await window({ starts_at: at(-60_000), ends_at: at(60_000), heartbeat_ids: [hb.id] });
    await setHeartbeatStatus(hb.id, 'down');
    clock += 120_000;
    const inside = await alert('heartbeat.down', hb, at(-90_000));
    await settle();
    await until(inside.id, 'released');
    assert.equal(await deliveries(inside.id), 1);
  });

  it('waits for a window that begins where the first ends, and for an edited end', async () => {
    clock = Date.now();
    const hb = await heartbeat('etl');
    const first = await window({ starts_at: at(-60_000), ends_at: at(60_000), heartbeat_ids: [hb.id] });
    await window({ starts_at: at(60_000), ends_at: at(120_000), whole_project: true });
    await setHeartbeatStatus(hb.id, 'down');
    const down = await alert('heartbeat.down', hb, at(1_000));
    await settle();
    const [row] = await cp.db.sql<
      { r: number }[]
    >`select extract(epoch from release_at)::float8 * 1000 as r from held_alerts where event_id = ${down.id}`;
    assert.equal(Math.round(row!.r), clock + 120_000, 'held to the end of both');
    // The first window is lengthened past the second: the release waits for it.
    assert.equal((await api('PATCH', `/maintenance-windows/${first}`, { ends_at: at(180_000) })).status, 200);
    clock += 121_000;
    await roles[0]!.route();
    assert.equal(await heldStatus(down.id), 'held', 'postponed to the edited end');
    clock += 60_000;
    await until(down.id, 'released');
  });

  it('sends a held down soon after its window is cut short, not at the old end', async () => {
    clock = Date.now();
    const hb = await heartbeat('mailer');
    const w = await window({ starts_at: at(-60_000), ends_at: at(3_600_000), heartbeat_ids: [hb.id] });
    await setHeartbeatStatus(hb.id, 'down');
    const down = await alert('heartbeat.down', hb, at(1_000));
    await settle();
    assert.equal(await heldStatus(down.id), 'held');
    assert.equal((await api('PATCH', `/maintenance-windows/${w}`, { ends_at: at(5_000) })).status, 200);
    clock += 6_000;
    await until(down.id, 'released');
    assert.equal(await deliveries(down.id), 1);
  });

  it('releases each held alert once with two routers at it together', async () => {
    clock = Date.now();
    const beats = await Promise.all(Array.from({ length: 40 }, (_, i) => heartbeat(`job ${i}`)));
    await window({ starts_at: at(-60_000), ends_at: at(60_000), heartbeat_ids: beats.map((b) => b.id) });
    for (const b of beats) await setHeartbeatStatus(b.id, 'down');
    const downs = await Promise.all(beats.map((b) => alert('heartbeat.down', b, at(1_000))));
    await settle();
    for (const d of downs) assert.equal(await heldStatus(d.id), 'held');
    const second = await startRole();
    const before = roles[0]!.stats().router.released;
    const sent = sink.requests.length;
    clock += 120_000;
    await Promise.all([roles[0]!.route(), second.route()]);
    await eventually(async () => {
      await Promise.all([roles[0]!.route(), second.route()]);
      const [n] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from held_alerts where status = 'held'`;
      return n!.n === 0;
    }, 'every held alert released');
    const [row] = await cp.db.sql<{ n: number; events: number }[]>`
      select count(*)::int as n, count(distinct event_id)::int as events from deliveries
      where event_id = any(${`{${downs.map((d) => d.id).join(',')}}`}::uuid[])`;
    assert.deepEqual(row, { n: 40, events: 40 });
    assert.equal(roles[0]!.stats().router.released - before + second.stats().router.released, 40);
    await sink.waitForRequests(sent + 40);
    await second.stop();
    roles.splice(roles.indexOf(second), 1);
  });

  it('decides an up only after its down: while another router holds the down, the up waits', async () => {
    clock = Date.now();
    const hb = await heartbeat('sync');
    await window({ starts_at: at(-60_000), ends_at: at(600_000), heartbeat_ids: [hb.id] });
    for (const r of roles.splice(0)) await r.stop();
    const down = await alert('heartbeat.down', hb, at(1_000));
    const up = await alert('heartbeat.up', hb, at(2_000));
    // Another router has claimed the down and not committed yet.
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const other = cp.db.sql.begin(async (tx) => {
      await tx`select id from outbox_events where id = ${down.id} for update`;
      locked();
      await holding;
    });
    await lockTaken;
    const role = await startRole();
    try {
      await eventually(async () => {
        await role.route();
        return role.stats().router.deferred > 0;
      }, 'the up to be deferred');
      const [upRow] = await cp.db.sql<{ n: string | null }[]>`select notified_at as n from outbox_events where id = ${up.id}`;
      assert.equal(upRow!.n, null, 'the up is left for later');
    } finally {
      release();
      await other;
    }
    await settle();
    assert.equal(await heldStatus(down.id), 'recovered');
    assert.equal(await deliveries(down.id), 0);
    assert.equal(await deliveries(up.id), 0);
  });
});
