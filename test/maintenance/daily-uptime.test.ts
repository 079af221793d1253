import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dailyUptime } from '../../control-plane/src/monitors/history-repo.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/**
 * The status page's 90 daily bars leave maintenance out as the monitor's uptime does (ADR 0029):
 * time inside a window is neither down nor watched; a day spent in maintenance is whole.
 */
describe('daily uptime with maintenance', () => {
  let db: TestDatabase;
  let ada: TestAccount;
  before(async () => {
    db = await createTestDatabase();
    ada = await createAccount(db.sql);
  });
  after(() => db.drop());

  it('counts down time outside maintenance only, over the time watched outside it', async () => {
    const now = new Date('2026-11-26T12:00:00Z');
    const [m] = await db.sql<{ id: string }[]>`
      insert into monitors (project_id, name, url, valid_http_codes, created_at)
      values (${ada.project_id}, 'm', 'https://m.example', '{200}', '2026-11-20T00:00:00Z') returning id`;
    const occurrence = (from: string, to: string, monitorIds: string[] = [m!.id]) =>
      db.sql`insert into maintenance_occurrences (project_id, whole_project, monitor_ids, heartbeat_ids, starts_at, ends_at)
        values (${ada.project_id}, false, ${monitorIds}::uuid[], '{}', ${from}, ${to})`;
    // 24 Nov: down 02:00-04:00; maintenance 03:00-05:00 and from 23:00 (below): 1 h down over 21 h watched.
    await db.sql`insert into incidents (monitor_id, started_at, ended_at) values (${m!.id}, '2026-11-24T02:00:00Z', '2026-11-24T04:00:00Z')`;
    await occurrence('2026-11-24T03:00:00Z', '2026-11-24T05:00:00Z');
    // 25 Nov: down all day, all of it maintenance (two overlapping windows): whole.
    await db.sql`insert into incidents (monitor_id, started_at, ended_at) values (${m!.id}, '2026-11-25T00:00:00Z', '2026-11-26T00:00:00Z')`;
    await occurrence('2026-11-24T23:00:00Z', '2026-11-25T13:00:00Z');
    await occurrence('2026-11-25T12:00:00Z', '2026-11-26T00:00:00Z');
    // 26 Nov, to noon: another monitor's window changes nothing here; down 11:00-12:00 (open).
    await occurrence('2026-11-26T00:00:00Z', '2026-11-26T12:00:00Z', ['00000000-0000-4000-8000-000000000000']);
    await db.sql`insert into incidents (monitor_id, started_at) values (${m!.id}, '2026-11-26T11:00:00Z')`;

    const days = new Map((await dailyUptime(db.sql, ada.project_id, [m!.id], now, 8)).get(m!.id)!.map((d) => [d.day, d.uptime]));
    assert.equal(days.get('2026-11-19'), null, 'before the monitor existed');
    assert.equal(days.get('2026-11-23'), 100);
    assert.ok(Math.abs(days.get('2026-11-24')! - 100 * (1 - 1 / 21)) < 1e-9, String(days.get('2026-11-24')));
    assert.equal(days.get('2026-11-25'), 100, 'a day spent in maintenance is whole');
    assert.ok(Math.abs(days.get('2026-11-26')! - 100 * (1 - 1 / 12)) < 1e-9, String(days.get('2026-11-26')));
  });
});
