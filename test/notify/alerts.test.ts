import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../shared/src/contracts/events.ts';
import type { Notification } from '../../shared/src/contracts/notify.ts';
import { startNotifyRole, type NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { domainEvent, recordAlert } from './helpers.ts';

const MIN = 60_000;

/**
 * The life of an alert (ADR 0032) with a real notify role on real Postgres and webhook sinks:
 * opened with its down, re-notified and escalated by the project's policy on the role's clock
 * (the test's), acknowledged and snoozed through the API and through the signed links the
 * messages carry, resolved with its up; and integrations that keep failing reported through the
 * others.
 */
describe('alerts: acknowledge, snooze, re-notify, escalate', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let sink: Target;
  let roles: NotifyRole[] = [];
  let clock = Date.now();
  let escalationId: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    await api('POST', '/integrations', { project_id: ada.project_id, name: 'ops', type: 'webhook', config: { url: `${sink.url}/hook` } });
    const esc = await api('POST', '/integrations', {
      project_id: ada.project_id,
      name: 'on-call lead',
      type: 'webhook',
      config: { url: `${sink.url}/escalation` },
    });
    escalationId = esc.body.data.id;
    // Two routers share the work, as two notify processes would: no step may be sent twice.
    for (let i = 0; i < 2; i++)
      roles.push(
        await startNotifyRole({
          sql: cp.db.sql,
          log: quietLog,
          config: cp.config,
          keys: cp.cp.keys,
          pollMs: 60_000,
          now: () => new Date(clock),
        }),
      );
  });
  after(async () => {
    for (const r of roles) await r.stop();
    roles = [];
    await sink.close();
    await cp.stop();
  });

  const settle = () =>
    eventually(async () => {
      await Promise.all(roles.map((r) => r.route()));
      const [row] = await cp.db.sql<{ n: number }[]>`
        select (select count(*) from outbox_events where notified_at is null)
          + (select count(*) from alerts where next_step_at <= ${new Date(clock)})
          + (select count(*) from deliveries where status in ('pending', 'sending')) as n`;
      return Number(row!.n) === 0;
    }, 'routed, stepped and delivered');
  const sent = (path = '') =>
    sink.requests.filter((r) => path === '' || r.url === path).map((r) => JSON.parse(r.body) as Notification & { event: string });
  const heartbeat = async (name: string) => {
    const res = await api('POST', '/heartbeats', { name, project_id: ada.project_id, grace_period: 60, period: 60 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; name: string; snooze_url: string; ping_url: string };
  };
  /** The heartbeat goes down as the deadline role records it: its state, and the event in the outbox. */
  const goDown = async (h: { id: string; name: string }, at: number): Promise<DomainEvent> => {
    await cp.db.sql`update heartbeats set status = 'down', down_since = ${new Date(at)} where id = ${h.id}`;
    const e = domainEvent(ada.project_id, {
      kind: 'heartbeat.down',
      subject: { type: 'heartbeat', id: h.id, name: h.name },
      data: { reason: 'missed' },
      occurred_at: new Date(at).toISOString(),
    });
    await recordAlert(cp, e);
    return e;
  };
  const goUp = async (h: { id: string; name: string }, at: number) => {
    await cp.db.sql`update heartbeats set status = 'up', down_since = null where id = ${h.id}`;
    await recordAlert(
      cp,
      domainEvent(ada.project_id, {
        kind: 'heartbeat.up',
        subject: { type: 'heartbeat', id: h.id, name: h.name },
        data: {},
        occurred_at: new Date(at).toISOString(),
      }),
    );
  };
  const ofSubject = (id: string, path = '') => sent(path).filter((n) => n.subject.id === id);
  /** A link of a message, on the test's server (PUBLIC_URL names the address users reach). */
  const local = (link: string) => {
    const u = new URL(link);
    return `${cp.url}${u.pathname}${u.search}`;
  };

  it('re-notifies every N minutes, escalates once after M, and stops when acknowledged through the link', async () => {
    const policy = await api('PUT', `/projects/${ada.project_id}`, {
      renotify_minutes: 5,
      escalate_after_minutes: 12,
      escalation_integration_ids: [escalationId],
    });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    assert.deepEqual(policy.body.data.escalation_integration_ids, [escalationId]);

    clock = Date.now();
    const h = await heartbeat('nightly backup');
    const down = await goDown(h, clock);
    await settle();
    const first = ofSubject(h.id, '/hook');
    assert.deepEqual(
      first.map((n) => n.event),
      ['heartbeat.down'],
    );
    assert.equal(ofSubject(h.id, '/escalation').length, 0, 'the escalation integration hears of nothing before the escalation');
    const actions = first[0]!.actions!;
    assert.equal(actions.alert_id, down.id);
    assert.match(
      actions.acknowledge_url,
      new RegExp(`^${cp.config.PUBLIC_URL}/app/alerts/${down.id}/acknowledge\\?sig=[A-Za-z0-9_-]{43}$`),
    );
    assert.match(actions.snooze_url, /\/snooze\?sig=/);

    const open = await api('GET', `/alerts?status=open&heartbeat_id=${h.id}`);
    assert.equal(open.body.data.length, 1);
    assert.equal(open.body.data[0].id, down.id);
    assert.equal(open.body.data[0].status, 'open');

    // 4 minutes: nothing yet. 5: the first reminder, to the integration that got the down only.
    clock += 4 * MIN;
    await settle();
    assert.equal(ofSubject(h.id).length, 1);
    clock += 1 * MIN;
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/hook').map((n) => [n.event, n.data.count]),
      [
        ['heartbeat.down', undefined],
        ['alert.renotified', 1],
      ],
    );
    const reminder = ofSubject(h.id, '/hook')[1]!;
    assert.equal(reminder.actions?.alert_id, down.id, 'a reminder carries the links too');
    assert.match(reminder.message, /still down/);

    // 10 minutes: the second reminder; 12: escalated, to the escalation integration only; 15: the reminder goes to both.
    clock += 5 * MIN;
    await settle();
    assert.equal(ofSubject(h.id, '/hook').length, 3);
    assert.equal(ofSubject(h.id, '/escalation').length, 0);
    clock += 2 * MIN;
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/escalation').map((n) => n.event),
      ['alert.escalated'],
    );
    clock += 3 * MIN;
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/escalation').map((n) => [n.event, n.data.count]),
      [
        ['alert.escalated', undefined],
        ['alert.renotified', 3],
      ],
    );

    // The link: a GET shows the button and acknowledges nothing (scanners fetch links)...
    const page = await fetch(local(actions.acknowledge_url));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /data-testid="acknowledge"/);
    assert.equal((await api('GET', `/alerts/${down.id}`)).body.data.status, 'open');
    // ...a wrong signature is a 404, and a POST acknowledges.
    const forged = await fetch(local(actions.acknowledge_url).replace(/sig=.{5}/, 'sig=AAAAA'), { method: 'POST' });
    assert.equal(forged.status, 404);
    const ack = await fetch(local(actions.acknowledge_url), { method: 'POST' });
    assert.equal(ack.status, 200);
    assert.equal((await ack.text()).trim(), 'Acknowledged');
    const acked = (await api('GET', `/alerts/${down.id}`)).body.data;
    assert.equal(acked.status, 'acknowledged');
    assert.equal(acked.acknowledged_by, 'a link in a message');
    assert.equal(acked.next_step_at, null);
    await settle();
    for (const path of ['/hook', '/escalation'])
      assert.equal(ofSubject(h.id, path).filter((n) => n.event === 'alert.acknowledged').length, 1, `${path} hears who took it`);

    // An hour on: no more reminders; acknowledging again changes nothing.
    const before = ofSubject(h.id).length;
    clock += 60 * MIN;
    await settle();
    assert.equal(ofSubject(h.id).length, before);
    assert.equal((await fetch(local(actions.acknowledge_url), { method: 'POST' })).status, 200);
    await settle();
    assert.equal(ofSubject(h.id).length, before);

    // Every step once, though two routers took turns.
    const ids = sink.requests.map((r) => r.headers['x-uptime-delivery']);
    assert.equal(new Set(ids).size, ids.length, 'no delivery sent twice');

    // The up resolves it; acknowledging a resolved alert through the API is a 409.
    await goUp(h, clock);
    await settle();
    assert.equal((await api('GET', `/alerts/${down.id}`)).body.data.status, 'resolved');
  });

  it('a snoozed alert waits for the snooze, then is re-notified at once; an up resolves it and ends the reminders', async () => {
    await api('PUT', `/projects/${ada.project_id}`, { renotify_minutes: 5, escalate_after_minutes: null, escalation_integration_ids: [] });
    clock = Date.now();
    const h = await heartbeat('hourly sync');
    const down = await goDown(h, clock);
    await settle();
    clock += 1 * MIN;
    const snoozed = await api('POST', `/alerts/${down.id}/snooze`, { minutes: 30 });
    assert.equal(snoozed.status, 200, JSON.stringify(snoozed.body));
    assert.equal(snoozed.body.data.snoozed_by, ada.email);
    assert.equal((await api('POST', `/alerts/${down.id}/snooze`, { minutes: 0 })).status, 422);
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/hook').map((n) => n.event),
      ['heartbeat.down', 'alert.snoozed'],
    );
    // The API's snooze counts from its own clock (the real one); the role's clock catches up.
    const until = Date.parse(snoozed.body.data.snoozed_until);
    clock = until - MIN;
    await settle();
    assert.equal(ofSubject(h.id, '/hook').filter((n) => n.event === 'alert.renotified').length, 0, 'no reminder while snoozed');
    clock = until + 1_000;
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/hook')
        .filter((n) => n.event === 'alert.renotified')
        .map((n) => [n.occurred_at, n.data.count]),
      [[new Date(until).toISOString(), 1]],
      'a reminder when the snooze ends',
    );

    await goUp(h, clock);
    await settle();
    const resolved = (await api('GET', `/alerts/${down.id}`)).body.data;
    assert.equal(resolved.status, 'resolved');
    clock += 30 * MIN;
    await settle();
    assert.equal(ofSubject(h.id, '/hook').filter((n) => n.event === 'alert.renotified').length, 1, 'no reminder after the up');
    const late = await api('POST', `/alerts/${down.id}/acknowledge`);
    assert.equal(late.status, 409);
  });

  it("holds a snoozed heartbeat's down until its snooze ends (here: ended early through the API), snoozed from its signed URL", async () => {
    await api('PUT', `/projects/${ada.project_id}`, { renotify_minutes: null });
    clock = Date.now();
    const h = await heartbeat('weekly report');
    const url = new URL(h.snooze_url);
    assert.equal(url.pathname, `/heartbeat/${h.id}/snooze`);
    const wrong = await fetch(`${cp.url}/heartbeat/${h.id}/snooze?minutes=30&sig=${'A'.repeat(43)}`);
    assert.equal(wrong.status, 404);
    const snooze = await fetch(`${cp.url}${url.pathname}${url.search}&minutes=30`);
    assert.equal(snooze.status, 200);
    assert.match(await snooze.text(), /^Snoozed until /);
    assert.ok((await api('GET', `/heartbeats/${h.id}`)).body.data.snoozed_until);

    await goDown(h, clock);
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/hook').map((n) => n.event),
      ['heartbeat.snoozed'],
      'the down is held',
    );
    const [held] = await cp.db.sql<{ reason: string }[]>`select reason from held_alerts where subject_id = ${h.id}`;
    assert.equal(held!.reason, 'snooze');

    const end = await api('DELETE', `/heartbeats/${h.id}/snooze`);
    assert.equal(end.status, 200, JSON.stringify(end.body));
    assert.equal(end.body.data.snoozed_until, null);
    clock = Date.now() + 1_000;
    await settle();
    assert.deepEqual(
      ofSubject(h.id, '/hook').map((n) => [n.event, n.data.until ?? null]),
      [
        ['heartbeat.snoozed', ofSubject(h.id, '/hook')[0]!.data.until],
        ['heartbeat.snoozed', null],
        ['heartbeat.down', null],
      ],
    );
  });

  it('tells the project through its other integrations when one keeps failing, once, and when it delivers again', async () => {
    // Only a role with a short back-off retries here (the others would wait minutes between attempts).
    for (const r of roles) await r.stop();
    roles = [];
    const failing = await startTarget({ status: 500, body: 'broken' });
    try {
      const res = await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'broken hook',
        type: 'webhook',
        config: { url: `${failing.url}/x` },
      });
      const brokenId = res.body.data.id as string;
      const role = await startNotifyRole({
        sql: cp.db.sql,
        log: quietLog,
        config: cp.config,
        keys: cp.cp.keys,
        pollMs: 100,
        backoffBaseMs: 10,
        backoffCapMs: 20,
      });
      try {
        clock = Date.now();
        const h = await heartbeat('failing channel');
        await goDown(h, clock);
        const failingNotices = () => sent('/hook').filter((n) => n.event === 'integration.failing' && n.subject.id === brokenId);
        await eventually(async () => {
          await role.route();
          return failingNotices().length === 1;
        }, 'integration.failing sent through the others');
        const notice = failingNotices()[0]!;
        assert.equal(notice.subject.type, 'integration');
        assert.match(notice.message, /keeps failing/);
        assert.match(String(notice.data.last_error), /HTTP 500/);
        const listed = await api('GET', `/integrations/${brokenId}`);
        assert.ok(listed.status === 200);

        // It delivers again: the project hears so, once.
        failing.respond({ status: 200, body: 'ok' });
        await goUp(h, Date.now());
        await eventually(async () => {
          await role.route();
          return sent('/hook').some((n) => n.event === 'integration.recovered' && n.subject.id === brokenId);
        }, 'integration.recovered sent');
        assert.equal(failingNotices().length, 1, 'told once per run of failures');
        const [row] = await cp.db.sql<{ failures: number }[]>`select failures from integrations where id = ${brokenId}`;
        assert.equal(row!.failures, 0);
      } finally {
        await role.stop();
        await api('DELETE', `/integrations/${brokenId}`);
      }
    } finally {
      await failing.close();
    }
  });
});
