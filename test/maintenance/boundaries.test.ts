import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uptimeWindows } from '../../control-plane/src/monitors/history-repo.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';
import { manualClock, type ManualClock } from '../heartbeats/manual-clock.ts';

/**
 * Windows start and end on the clock's time through the boundary worker's one timer: each run is
 * recorded (the time uptime leaves out) and published as maintenance.started / maintenance.ended.
 */
describe('maintenance window boundaries and uptime', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let clock: ManualClock;
  let t0: number;

  const events = async (windowId: string) =>
    cp.db.sql<{ kind: string; occurred_at: string; data: Record<string, unknown> }[]>`
      select kind, payload ->> 'occurred_at' as occurred_at, payload -> 'data' as data from outbox_events
      where payload #>> '{subject,id}' = ${windowId} order by created_at`;

  before(async () => {
    t0 = Date.now();
    clock = manualClock(t0);
    cp = await startTestControlPlane({ roles: ['api', 'notify'], clock });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('starts and ends a window at its boundaries, and leaves its time out of uptime', async () => {
    const m = (await api('POST', '/monitors', { name: 'Shop', url: 'https://example.com', project_id: ada.project_id })).body.data;
    const iso = (offsetS: number) => new Date(t0 + offsetS * 1000).toISOString();
    const w = (
      await api('POST', '/maintenance-windows', {
        name: 'Upgrade',
        project_id: ada.project_id,
        starts_at: iso(60),
        ends_at: iso(660),
        monitor_ids: [m.id],
      })
    ).body.data;
    // Down from 30 s to 360 s: 300 s of it inside the window.
    await cp.db.sql`insert into incidents (monitor_id, started_at, ended_at) values (${m.id}, ${iso(30)}, ${iso(360)})`;

    // The worker sleeps until the start; nothing has happened yet.
    await eventually(
      async () => (await cp.db.sql`select 1 from maintenance_windows where id = ${w.id} and next_boundary_at = ${iso(60)}`).length === 1,
      'the start to be armed',
    );
    assert.equal((await events(w.id)).length, 0);

    clock.advance(61_000);
    await eventually(async () => (await events(w.id)).length === 1, 'maintenance.started');
    const [started] = await events(w.id);
    assert.equal(started!.kind, 'maintenance.started');
    assert.equal(Date.parse(started!.occurred_at), t0 + 60_000);
    assert.deepEqual(started!.data.monitor_ids, [m.id]);
    assert.equal((await api('GET', `/maintenance-windows/${w.id}`)).body.data.in_progress, true);

    clock.advance(600_000);
    await eventually(async () => (await events(w.id)).length === 2, 'maintenance.ended');
    const ended = (await events(w.id))[1]!;
    assert.equal(ended.kind, 'maintenance.ended');
    assert.equal(Date.parse(ended.occurred_at), t0 + 660_000);
    assert.equal(Date.parse(ended.data.starts_at as string), t0 + 60_000);

    const occurrences = await cp.db.sql<{ s: number; e: number }[]>`
      select extract(epoch from starts_at) * 1000 as s, extract(epoch from ends_at) * 1000 as e from maintenance_occurrences where window_id = ${w.id}`;
    assert.deepEqual(
      occurrences.map((o) => [Math.round(Number(o.s)), Math.round(Number(o.e))]),
      [[t0 + 60_000, t0 + 660_000]],
    );

    // At 1200 s: 600 s watched outside the window, 30 s of it down: 95 %, not 72.5 %.
    clock.advance(540_000);
    const uptime = (await api('GET', `/monitors/${m.id}`)).body.data.uptime;
    assert.ok(Math.abs(uptime - 95) < 0.05, `uptime ${uptime}`);
    const windows = (await uptimeWindows(cp.db.sql, ada.project_id, [m.id], new Date(clock.now()))).get(m.id)!;
    assert.ok(Math.abs(windows.day - 95) < 0.05, `24 h uptime ${windows.day}`);
    assert.ok(Math.abs(windows.month - 95) < 0.05, `30 d uptime ${windows.month}`);
  });

  it('ends a window in progress when it is deleted, with its event', async () => {
    const w = (
      await api('POST', '/maintenance-windows', {
        name: 'Whole project',
        project_id: ada.project_id,
        cron: '* * * * *',
        duration_seconds: 120,
        whole_project: true,
      })
    ).body.data;
    clock.advance(61_000);
    await eventually(async () => (await events(w.id)).some((e) => e.kind === 'maintenance.started'), 'maintenance.started');
    assert.equal((await api('DELETE', `/maintenance-windows/${w.id}`)).status, 204);
    const kinds = (await events(w.id)).map((e) => e.kind);
    assert.deepEqual(kinds, ['maintenance.started', 'maintenance.ended']);
    const [open] = await cp.db.sql<{ n: number }[]>`
      select count(*)::int as n from maintenance_occurrences where window_id is null and ends_at > ${new Date(clock.now())}`;
    assert.equal(open!.n, 0, 'its occurrence ends with it');
  });
});
