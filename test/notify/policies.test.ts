import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { recordEvent } from '../../control-plane/src/platform/outbox.ts';
import { startNotifyRole, type NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { domainEvent, recordAlert } from './helpers.ts';

/**
 * Flapping, dependencies on heartbeats and regional incidents in the router (ADR 0030, ADR 0031),
 * with a real notify role on
 * real Postgres and a webhook sink. The role's clock is the test's; the events carry their own
 * occurred_at, and the monitor's incidents are written as ingest writes them.
 */
describe('flapping, heartbeat parents and regional incidents in the router', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  let role: NotifyRole;
  let clock = Date.now();

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/hook` } });
    role = await startNotifyRole({
      sql: cp.db.sql,
      log: quietLog,
      config: cp.config,
      keys: cp.cp.keys,
      pollMs: 60_000,
      now: () => new Date(clock),
    });
  });
  after(async () => {
    await role.stop();
    await sink.close();
    await cp.stop();
  });

  const at = (offsetMs: number) => new Date(clock + offsetMs).toISOString();
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
  const routed = () =>
    eventually(async () => {
      await role.route();
      const [row] = await cp.db.sql<{ n: number }[]>`
        select (select count(*) from outbox_events where notified_at is null)
          + (select count(*) from held_alerts where status = 'held' and release_at <= ${new Date(clock)})
          + (select count(*) from deliveries where status in ('pending', 'sending')) as n`;
      return Number(row!.n) === 0;
    }, 'routed, released and delivered');
  const sent = () =>
    sink.requests.map((r) => JSON.parse(r.body) as { event: string; subject: { id: string }; data: Record<string, unknown> });

  it('sends one message when a monitor starts flapping, none per change, and one when it settles', async () => {
    clock = Date.now();
    const res = await api('POST', '/monitors', {
      name: 'shaky',
      url: 'https://example.com',
      project_id: ada.project_id,
      flap_threshold: 3,
      flap_window_seconds: 600,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = { type: 'monitor' as const, id: res.body.data.id as string, name: 'shaky' };
    const before = sink.requests.length;
    // Ingest's writes: an incident per down, closed by the up; an event per change.
    const change = async (i: number) => {
      const t = at(i * 20_000);
      if (i % 2 === 0) {
        const [inc] = await cp.db.sql<{ id: string }[]>`
          insert into incidents (monitor_id, started_at) values (${m.id}, ${t}) returning id`;
        await cp.db.sql`update monitors set status = 2 where id = ${m.id}`;
        await alert('monitor.down', m, t, { incident_id: inc!.id });
      } else {
        await cp.db.sql`update incidents set ended_at = ${t} where monitor_id = ${m.id} and ended_at is null`;
        await cp.db.sql`update monitors set status = 1 where id = ${m.id}`;
        await alert('monitor.up', m, t, {});
      }
      await routed();
    };
    // Changes 1 to 3 are sent (down, up, down); the 4th (an up) makes it flap.
    for (let i = 0; i < 3; i++) await change(i);
    assert.deepEqual(
      sent()
        .slice(before)
        .map((s) => s.event),
      ['monitor.down', 'monitor.up', 'monitor.down'],
    );
    await change(3);
    const flapping = sent().slice(before + 3);
    assert.deepEqual(
      flapping.map((s) => s.event),
      ['monitor.flapping'],
    );
    assert.equal(flapping[0]!.data.status, 'up');
    assert.equal(flapping[0]!.data.changes, 4);
    const read = (await api('GET', `/monitors/${m.id}`)).body.data;
    assert.equal(Date.parse(read.flapping_since), Date.parse(at(3 * 20_000)));

    // Six more changes: nothing sent. It ends down.
    for (let i = 4; i < 10; i++) await change(i);
    await change(10);
    assert.equal(sent().length, before + 4, 'no message per change while flapping');

    // A window after its last change (at +200 s) it has settled.
    clock += 200_000 + 599_000;
    await routed();
    assert.equal(sent().length, before + 4, 'not settled a second early');
    clock += 1_000;
    await routed();
    const settledMsg = sent().slice(before + 4);
    assert.deepEqual(
      settledMsg.map((s) => s.event),
      ['monitor.settled'],
    );
    assert.equal(settledMsg[0]!.data.status, 'down', 'it says how the monitor is now');
    assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.flapping_since, null);

    // Both are public events on EVENTS, recorded once.
    await eventually(async () => {
      const kinds = (await readStream(cp.nats.nc, cp.nats.names.streams.events))
        .filter((e) => e.data.subject.id === m.id)
        .map((e) => e.data.kind);
      return kinds.filter((k) => k === 'monitor.flapping').length === 1 && kinds.filter((k) => k === 'monitor.settled').length === 1;
    }, 'flapping and settled on EVENTS');

    // Settled down, its next up is sent as usual.
    clock += 60_000;
    await cp.db.sql`update incidents set ended_at = ${at(0)} where monitor_id = ${m.id} and ended_at is null`;
    await alert('monitor.up', m, at(0), {});
    await routed();
    assert.deepEqual(
      sent()
        .slice(before + 5)
        .map((s) => s.event),
      ['monitor.up'],
    );
  });

  it('holds a monitor down while the heartbeat it depends on is down, and sends it when the heartbeat is up and the monitor still down', async () => {
    clock = Date.now();
    const hb = (await api('POST', '/heartbeats', { name: 'vpn', project_id: ada.project_id })).body.data;
    const res = await api('POST', '/monitors', {
      name: 'intranet',
      url: 'https://example.com',
      project_id: ada.project_id,
      depends_on: [{ type: 'heartbeat', id: hb.id }],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = { type: 'monitor' as const, id: res.body.data.id as string, name: 'intranet' };
    assert.deepEqual(res.body.data.depends_on, [{ type: 'heartbeat', id: hb.id }]);
    await cp.db.sql`update heartbeats set status = 'down' where id = ${hb.id}`;
    const [inc] = await cp.db.sql<{ id: string }[]>`insert into incidents (monitor_id, started_at) values (${m.id}, ${at(0)}) returning id`;
    const before = sink.requests.length;
    const down = await alert('monitor.down', m, at(0), { incident_id: inc!.id });
    await routed();
    assert.equal(sink.requests.length, before, 'held while the heartbeat is down');
    const [row] = await cp.db.sql<
      { status: string; parent_id: string }[]
    >`select status, parent_id from held_alerts where event_id = ${down.id}`;
    assert.deepEqual({ ...row }, { status: 'held', parent_id: hb.id });

    await cp.db.sql`update heartbeats set status = 'up', last_ping_at = ${at(1_000)} where id = ${hb.id}`;
    // A heartbeat parent gives its child its own grace to recover (interval 60 s: 65 s).
    await routed();
    assert.equal(sink.requests.length, before, 'the monitor is given its grace to recover too');
    clock += 65_000;
    await routed();
    assert.equal(sink.requests.length, before, 'the grace counts from the ping that brought the heartbeat up (at +1 s)');
    clock += 1_000;
    await routed();
    assert.deepEqual(
      sent()
        .slice(before)
        .map((s) => `${s.event} ${s.subject.id}`),
      [`monitor.down ${m.id}`],
    );
  });

  it('sends a regional incident only for a monitor that asks for them', async () => {
    const create = async (name: string, alert_regional: boolean) => {
      const res = await api('POST', '/monitors', {
        name,
        url: 'https://example.com',
        project_id: ada.project_id,
        regions: ['eu', 'us', 'ap'],
        alert_regional,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.data.alert_regional, alert_regional);
      return res.body.data.id as string;
    };
    const quiet = await create('quiet', false);
    const loud = await create('loud', true);
    const slot = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const results = (id: string, s: Date, euOk: boolean) =>
      ['eu', 'us', 'ap'].map((region) => ({
        monitor_id: id,
        region,
        agent_id: `agent-${region}`,
        scheduled_at: s.toISOString(),
        checked_at: new Date(s.getTime() + 10).toISOString(),
        ok: region !== 'eu' || euOk,
        status_code: region !== 'eu' || euOk ? 200 : 503,
        timings: { dns: 1, connect: 1, tls: 0, ttfb: 3, total: 8 },
        error: region !== 'eu' || euOk ? null : { class: 'status' as const, message: 'HTTP 503' },
        attempts: 1,
      }));
    const before = sink.requests.length;
    // Evaluated 31 s after the failing check: past the grace a regional incident waits for.
    await storeResults(cp.db.sql, [...results(quiet, slot, false), ...results(loud, slot, false)], new Date(slot.getTime() + 31_000));
    await routed();
    const later = new Date(slot.getTime() + 60_000);
    await storeResults(cp.db.sql, [...results(quiet, later, true), ...results(loud, later, true)], new Date(later.getTime() + 1_000));
    await routed();
    const got = sent().slice(before);
    assert.deepEqual(
      got.map((s) => `${s.event} ${s.subject.id}`),
      [`monitor.regional_down ${loud}`, `monitor.regional_up ${loud}`],
    );
    assert.deepEqual(got[0]!.data.regions, ['eu']);
    // Both are on EVENTS, and on the monitors' incident lists.
    for (const id of [quiet, loud]) {
      const [incident] = (await api('GET', `/monitors/${id}/incidents`)).body.data;
      assert.deepEqual([incident.scope, incident.regions, incident.duration], ['regional', ['eu'], 60]);
      assert.equal((await api('GET', `/monitors/${id}`)).body.data.status, 1, 'the monitor stayed up');
    }
  });

  it("groups a project's downs once however many routers release them, and never loses one routed after its group was sent", async () => {
    clock = Date.now();
    const project = (await api('POST', '/projects', { name: 'Grouped', alert_group_seconds: 30 })).body.data;
    await api('POST', '/integrations', { project_id: project.id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/grouped` } });
    /** Monitors down at `occurred`, their incidents and events written in one transaction (routed together). */
    const downs = async (names: string[], occurred: string) => {
      const out: { type: 'monitor'; id: string; name: string }[] = [];
      for (const name of names) {
        const res = await api('POST', '/monitors', { name, url: 'https://example.com', project_id: project.id });
        out.push({ type: 'monitor' as const, id: res.body.data.id as string, name });
      }
      await cp.db.sql.begin(async (tx) => {
        for (const m of out) {
          const [inc] = await tx<
            { id: string }[]
          >`insert into incidents (monitor_id, started_at) values (${m.id}, ${occurred}) returning id`;
          await recordEvent(
            tx,
            domainEvent(project.id, { kind: 'monitor.down', subject: m, data: { incident_id: inc!.id }, occurred_at: occurred }),
          );
        }
      });
      return out;
    };
    const second = await startNotifyRole({
      sql: cp.db.sql,
      log: quietLog,
      config: cp.config,
      keys: cp.cp.keys,
      pollMs: 60_000,
      now: () => new Date(clock),
    });
    try {
      const grouped = () =>
        sink.requests
          .filter((r) => r.url === '/grouped')
          .map((r) => JSON.parse(r.body) as { event: string; subject: { id: string }; data: Record<string, unknown> });
      const t = at(0);
      const [a, b] = (await downs(['a', 'b'], t)).map((m) => m.id);
      await routed();
      assert.equal(grouped().length, 0, 'held for the window');
      clock += 31_000;
      // Both routers release at once: one message.
      await Promise.all([role.route(), second.route()]);
      await routed();
      assert.deepEqual(
        grouped().map((g) => [g.event, g.data.count]),
        [['alerts.grouped', 2]],
      );
      assert.deepEqual(new Set((grouped()[0]!.data.alerts as { subject: { id: string } }[]).map((x) => x.subject.id)), new Set([a, b]));
      // Two more downs that occurred at the same instant, routed after the group went out: a group
      // of their own (sharing the first one's release time), not lost to it.
      const [c, d] = (await downs(['c', 'd'], t)).map((m) => m.id);
      await routed();
      await routed();
      const late = grouped().slice(1);
      assert.deepEqual(
        late.map((g) => [g.event, g.data.count]),
        [['alerts.grouped', 2]],
      );
      assert.deepEqual(new Set((late[0]!.data.alerts as { subject: { id: string } }[]).map((x) => x.subject.id)), new Set([c, d]));
    } finally {
      await second.stop();
    }
  });
});
