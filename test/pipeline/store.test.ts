import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const t0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000);

function result(monitorId: string, region: string, minute: number, ok: boolean, extra: Partial<CheckResult> = {}): CheckResult {
  const scheduled = at(minute).toISOString();
  return {
    monitor_id: monitorId,
    region,
    agent_id: `agent-${region}`,
    scheduled_at: scheduled,
    checked_at: new Date(at(minute).getTime() + 7).toISOString(),
    ok,
    status_code: ok ? 200 : 503,
    timings: { dns: 1.5, connect: 2, tls: 0, ttfb: 5, total: 9.25 },
    error: ok ? null : { class: 'status', message: 'Unexpected "status" 503 \\ from upstream' },
    attempts: ok ? 1 : 2,
    ...extra,
  };
}

describe('storing result batches', () => {
  let db: TestDatabase;
  let ada: TestAccount;
  before(async () => {
    db = await createTestDatabase();
    ada = await createAccount(db.sql);
  });
  after(() => db.drop());

  const monitor = async (regions: string[] | null = null) => {
    const [m] = await db.sql<{ id: string }[]>`
      insert into monitors (project_id, name, url, valid_http_codes, regions)
      values (${ada.project_id}, 'm', 'https://m.example', '{200}', ${regions}::text[]) returning id`;
    return m!.id;
  };
  /** Everything a batch writes for these monitors, to compare before and after a replay. */
  const snapshot = async (ids: string[]) => ({
    results: await db.sql`select * from check_results where monitor_id = any(${ids}::uuid[]) order by monitor_id, scheduled_at, region`,
    rollups: await db.sql`select * from check_rollups where monitor_id = any(${ids}::uuid[]) order by monitor_id, hour, region`,
    votes: await db.sql`select * from monitor_regions where monitor_id = any(${ids}::uuid[]) order by monitor_id, region`,
    monitors: await db.sql`select id, status from monitors where id = any(${ids}::uuid[]) order by id`,
    incidents: await db.sql`select * from incidents where monitor_id = any(${ids}::uuid[]) order by monitor_id, started_at`,
    events:
      await db.sql`select kind, payload from outbox_events where payload->'subject'->>'id' = any(${ids}::text[]) order by created_at, kind`,
  });

  it('stores each column as sent, and a redelivered batch changes nothing', async () => {
    const a = await monitor();
    const b = await monitor(['eu', 'us']);
    const batch = [
      result(a, 'eu', 0, true),
      result(a, 'eu', 1, false),
      result(b, 'eu', 0, false),
      result(b, 'us', 0, false),
      result(b, 'us', 1, true, { error: { class: 'other', message: '' }, status_code: null }),
    ];
    const now = at(2);
    const events = await storeResults(db.sql, batch, now);
    // a: its one region failed last; b: 1 of 2 regions failing after us recovered, no quorum: a regional incident.
    assert.deepEqual(
      events.map((e) => [e.kind, e.subject.id]),
      [
        ['monitor.down', a],
        ['monitor.regional_down', b],
      ],
    );
    const first = await snapshot([a, b]);
    assert.equal(first.results.length, 5);
    const failed = first.results.find((r) => r.monitor_id === a && !r.ok)!;
    assert.equal(failed.error_message, 'Unexpected "status" 503 \\ from upstream');
    assert.equal(failed.error_class, 'status');
    assert.equal(failed.total_ms, 9.25);
    assert.equal(failed.agent_id, 'agent-eu');
    const empty = first.results.find((r) => r.monitor_id === b && r.region === 'us' && r.ok)!;
    assert.equal(empty.status_code, null);
    assert.equal(empty.error_message, '');
    assert.deepEqual(first.rollups.map((r) => `${r.monitor_id === a ? 'a' : 'b'} ${r.region} ${r.checks} ${r.failures}`).sort(), [
      'a eu 2 1',
      'b eu 1 1',
      'b us 2 1',
    ]);

    assert.deepEqual(await storeResults(db.sql, batch, now), []);
    assert.deepEqual(await snapshot([a, b]), first);
    // Part of it again inside a new batch: only the new row has effects.
    await storeResults(db.sql, [...batch.slice(0, 2), result(a, 'eu', 2, false)], now);
    const after = await snapshot([a]);
    assert.equal(after.results.length, 3);
    assert.equal(after.rollups[0]!.checks, 3);
    assert.equal(after.incidents.length, 1);
  });

  it('keeps the newest vote and last check per region whatever the order results arrive in', async () => {
    const m = await monitor();
    await storeResults(db.sql, [result(m, 'eu', 5, false)], at(6));
    await storeResults(db.sql, [result(m, 'eu', 3, true)], at(6));
    const [vote] = await db.sql`select ok, scheduled_at, checked_at from monitor_regions where monitor_id = ${m}`;
    assert.equal(vote!.ok, false);
    assert.equal(new Date(vote!.scheduled_at).getTime(), at(5).getTime());
    assert.equal(new Date(vote!.checked_at).getTime(), at(5).getTime() + 7);
    assert.equal((await db.sql`select status from monitors where id = ${m}`)[0]!.status, 2);
  });

  it('drops the results of a monitor that no longer exists, and stores the rest', async () => {
    const kept = await monitor();
    const gone = await monitor();
    await db.sql`delete from monitors where id = ${gone}`;
    await storeResults(db.sql, [result(gone, 'eu', 0, true), result(kept, 'eu', 0, true)], at(1));
    assert.equal((await db.sql`select 1 from check_results where monitor_id = ${gone}`).length, 0);
    assert.equal((await db.sql`select 1 from check_results where monitor_id = ${kept}`).length, 1);
  });

  it('deletes a monitor with its results and rollups', async () => {
    const m = await monitor();
    await storeResults(db.sql, [result(m, 'eu', 0, true), result(m, 'us', 0, true)], at(1));
    await db.sql`delete from monitors where id = ${m}`;
    assert.equal((await db.sql`select 1 from check_results where monitor_id = ${m}`).length, 0);
    assert.equal((await db.sql`select 1 from check_rollups where monitor_id = ${m}`).length, 0);
  });

  it('opens one incident when two ingesters write the failing regions of one monitor at once', async () => {
    for (let round = 0; round < 5; round++) {
      const m = await monitor(['eu', 'us']);
      await storeResults(db.sql, [result(m, 'eu', 0, true), result(m, 'us', 0, true)], at(1));
      // Either alone is 1 of 2 failing (no quorum); together they are 2 of 2.
      const events = (
        await Promise.all([
          storeResults(db.sql, [result(m, 'eu', 1, false)], at(2)),
          storeResults(db.sql, [result(m, 'us', 1, false)], at(2)),
        ])
      ).flat();
      assert.deepEqual(
        events.map((e) => e.kind),
        ['monitor.down'],
        `round ${round}`,
      );
      const s = await snapshot([m]);
      assert.equal(s.incidents.length, 1);
      assert.deepEqual(s.incidents[0]!.regions, ['eu', 'us']);
      assert.equal(s.monitors[0]!.status, 2);
    }
  });

  it('stores the results of a paused monitor without changing its status', async () => {
    const m = await monitor();
    await db.sql`update monitors set active = false where id = ${m}`;
    assert.deepEqual(await storeResults(db.sql, [result(m, 'eu', 0, false)], at(1)), []);
    assert.equal((await db.sql`select status from monitors where id = ${m}`)[0]!.status, 0);
    assert.equal((await db.sql`select 1 from check_results where monitor_id = ${m}`).length, 1);
  });
});
