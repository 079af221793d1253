import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, timestampFormat } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('maintenance windows API', () => {
  let cp: TestControlPlane;
  let alice: TestAccount;
  let bob: TestAccount;
  let monitorId: string;
  let heartbeatId: string;
  let bobsMonitor: string;

  const call = (who: TestAccount | null, method: string, path: string, body?: unknown) => apiClient(cp.url, who?.token)(method, path, body);
  const create = (body: Record<string, unknown>, who: TestAccount = alice) =>
    call(who, 'POST', '/maintenance-windows', { name: 'Database upgrade', project_id: who.project_id, ...body });
  const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
  const inTwoHours = () => new Date(Date.now() + 7_200_000).toISOString();

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    alice = await createAccount(cp.db.sql);
    bob = await createAccount(cp.db.sql);
    const m = await call(alice, 'POST', '/monitors', { name: 'Site', url: 'https://example.com', project_id: alice.project_id });
    monitorId = m.body.data.id;
    const h = await call(alice, 'POST', '/heartbeats', { name: 'Backup', project_id: alice.project_id, grace_period: 60 });
    heartbeatId = h.body.data.id;
    bobsMonitor = (await call(bob, 'POST', '/monitors', { name: 'Bob', url: 'https://example.org', project_id: bob.project_id })).body.data
      .id;
  });
  after(() => cp.stop());

  it('creates a one-off window on a monitor and answers 201 with the create envelope', async () => {
    const starts = inAnHour();
    const res = await create({ starts_at: starts, ends_at: inTwoHours(), monitor_ids: [monitorId], description: 'v16' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Maintenance window created successfully');
    const w = res.body.data;
    assert.equal(w.kind, 'one_off');
    assert.deepEqual(w.monitor_ids, [monitorId]);
    assert.deepEqual(w.heartbeat_ids, []);
    assert.equal(w.whole_project, false);
    assert.equal(w.in_progress, false);
    assert.equal(w.current_or_next.starts_at, w.starts_at);
    assert.match(w.starts_at, timestampFormat);
    assert.match(w.created_at, timestampFormat);
    assert.equal(Date.parse(w.starts_at), Date.parse(starts));
    const got = await call(alice, 'GET', `/maintenance-windows/${w.id}`);
    assert.deepEqual(got.body, { data: w });
  });

  it('creates a recurring window over the whole project, read in its time zone', async () => {
    const res = await create({ cron: '0 3 * * 0', duration_seconds: 7200, timezone: 'europe/berlin', whole_project: true });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const w = res.body.data;
    assert.equal(w.kind, 'recurring');
    assert.equal(w.timezone, 'Europe/Berlin');
    assert.equal(w.starts_at, null);
    const run = w.current_or_next;
    assert.equal(Date.parse(run.ends_at) - Date.parse(run.starts_at), 7_200_000);
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit' });
    assert.equal(local.format(new Date(run.starts_at)), 'Sun 03:00');
  });

  it('shows a window in progress', async () => {
    const res = await create({
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: inAnHour(),
      heartbeat_ids: [heartbeatId],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.data.in_progress, true);
  });

  it('lists the windows with the list envelope, per project', async () => {
    const res = await call(alice, 'GET', `/maintenance-windows?project_id=${alice.project_id}&per_page=2`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 2);
    assert.deepEqual(res.body.meta, { current_page: 1, per_page: 2, total: 3, last_page: 2 });
    const all = await call(alice, 'GET', '/maintenance-windows');
    assert.equal(all.body.meta.total, 3);
  });

  it('updates fields sent, and turns a one-off window into a recurring one', async () => {
    const w = (await create({ starts_at: inAnHour(), ends_at: inTwoHours(), monitor_ids: [monitorId] })).body.data;
    const res = await call(alice, 'PATCH', `/maintenance-windows/${w.id}`, {
      starts_at: null,
      ends_at: null,
      cron: '30 2 * * *',
      duration_seconds: 600,
      name: 'Nightly vacuum',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Maintenance window updated successfully');
    assert.equal(res.body.data.kind, 'recurring');
    assert.equal(res.body.data.name, 'Nightly vacuum');
    assert.deepEqual(res.body.data.monitor_ids, [monitorId]);
    const half = await call(alice, 'PATCH', `/maintenance-windows/${w.id}`, { starts_at: inAnHour() });
    assertInvalid(half, ['cron']);
  });

  it('deletes a window (204), then answers 404', async () => {
    const w = (await create({ starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true })).body.data;
    assert.equal((await call(alice, 'DELETE', `/maintenance-windows/${w.id}`)).status, 204);
    assert.equal((await call(alice, 'GET', `/maintenance-windows/${w.id}`)).status, 404);
    assert.equal((await call(alice, 'DELETE', `/maintenance-windows/${w.id}`)).status, 404);
  });

  describe('refuses bad input with a 422 naming the field', () => {
    const rows: [string, () => Record<string, unknown>, string][] = [
      ['no schedule at all', () => ({ whole_project: true }), 'starts_at'],
      [
        'a one-off and a recurring schedule together',
        () => ({ starts_at: inAnHour(), ends_at: inTwoHours(), cron: '0 3 * * *', duration_seconds: 60, whole_project: true }),
        'cron',
      ],
      ['an end before the start', () => ({ starts_at: inTwoHours(), ends_at: inAnHour(), whole_project: true }), 'ends_at'],
      ['a start without an end', () => ({ starts_at: inAnHour(), whole_project: true }), 'ends_at'],
      [
        'a one-off window over 31 days',
        () => ({ starts_at: inAnHour(), ends_at: new Date(Date.now() + 40 * 86_400_000).toISOString(), whole_project: true }),
        'ends_at',
      ],
      ['a cron without a duration', () => ({ cron: '0 3 * * *', whole_project: true }), 'duration_seconds'],
      ['a cron of three fields', () => ({ cron: '* * *', duration_seconds: 60, whole_project: true }), 'cron'],
      ['a duration under a minute', () => ({ cron: '0 3 * * *', duration_seconds: 59, whole_project: true }), 'duration_seconds'],
      ['a duration over 7 days', () => ({ cron: '0 3 * * *', duration_seconds: 604_801, whole_project: true }), 'duration_seconds'],
      [
        'an unknown time zone',
        () => ({ cron: '0 3 * * *', duration_seconds: 60, timezone: 'Mars/Olympus', whole_project: true }),
        'timezone',
      ],
      ['a date that is not one', () => ({ starts_at: 'tomorrow', ends_at: inTwoHours(), whole_project: true }), 'starts_at'],
      ['nothing covered', () => ({ starts_at: inAnHour(), ends_at: inTwoHours() }), 'monitor_ids'],
      [
        'the whole project and named monitors',
        () => ({ starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true, monitor_ids: [monitorId] }),
        'monitor_ids',
      ],
      ['a monitor of another project', () => ({ starts_at: inAnHour(), ends_at: inTwoHours(), monitor_ids: [bobsMonitor] }), 'monitor_ids'],
      ['an unknown heartbeat', () => ({ starts_at: inAnHour(), ends_at: inTwoHours(), heartbeat_ids: [randomUUID()] }), 'heartbeat_ids'],
      ['an id that is no uuid', () => ({ starts_at: inAnHour(), ends_at: inTwoHours(), monitor_ids: ['x'] }), 'monitor_ids.0'],
      ['an empty name', () => ({ name: ' ', starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true }), 'name'],
      [
        'a NUL in the description',
        () => ({ description: 'a\u0000b', starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true }),
        'description',
      ],
    ];
    for (const [name, body, field] of rows) {
      it(name, async () => assertInvalid(await create(body()), [field]));
    }
  });

  describe('tenancy', () => {
    it("answers 404 for another tenant's window, on every verb", async () => {
      const w = (await create({ starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true })).body.data;
      assert.equal((await call(bob, 'GET', `/maintenance-windows/${w.id}`)).status, 404);
      assert.equal((await call(bob, 'PATCH', `/maintenance-windows/${w.id}`, { name: 'mine' })).status, 404);
      assert.equal((await call(bob, 'DELETE', `/maintenance-windows/${w.id}`)).status, 404);
      assert.equal((await call(alice, 'GET', `/maintenance-windows/${w.id}`)).body.data.name, 'Database upgrade');
      const list = await call(bob, 'GET', '/maintenance-windows');
      assert.equal(list.body.meta.total, 0);
    });

    it("answers 403 for another tenant's project", async () => {
      const res = await create({ starts_at: inAnHour(), ends_at: inTwoHours(), whole_project: true, project_id: bob.project_id });
      assert.equal(res.status, 403);
      assert.equal((await call(alice, 'GET', `/maintenance-windows?project_id=${bob.project_id}`)).status, 403);
    });

    it('answers 401 without a token', async () => {
      assert.equal((await call(null, 'GET', '/maintenance-windows')).status, 401);
    });
  });
});
