import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../control-plane/src/accounts/bearer.ts';
import * as history from '../../control-plane/src/monitors/history.ts';
import * as monitors from '../../control-plane/src/monitors/service.ts';
import type { ApiContext } from '../../control-plane/src/platform/http/context.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const now = new Date('2026-03-10T12:00:00.000Z');
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000).toISOString();

/** What the dashboard's monitor list and status page read, against a database. */
describe('reads of the monitors list and the status page', () => {
  let db: TestDatabase;
  let ctx: ApiContext;
  let ada: TestAccount;
  let p: Principal;
  const ids: Record<string, string> = {};

  const create = async (name: string, over: Record<string, unknown>) => {
    const m = await monitors.createMonitor(ctx, p, {
      project_id: ada.project_id,
      name,
      url: 'https://example.test/',
      _method: 'GET',
      interval: 60,
      active: true,
      follow_redirects: true,
      ...over,
    } as Parameters<typeof monitors.createMonitor>[2]);
    ids[name] = m.id;
    return m.id;
  };
  const incident = (id: string, from: number, to: number | null, cause = 'Timed out after 10000 ms') =>
    db.sql`insert into incidents (monitor_id, started_at, ended_at, cause, regions)
      values (${id}, ${hoursAgo(from)}, ${to === null ? null : hoursAgo(to)}, ${cause}, '{eu-west}')`;

  before(async () => {
    db = await createTestDatabase();
    ctx = { sql: db.sql, now: () => now } as unknown as ApiContext;
    ada = await createAccount(db.sql);
    p = {
      userId: ada.user_id,
      tokenId: 'test',
      organizationIds: new Set([ada.organization_id]),
      ownedOrganizationIds: new Set([ada.organization_id]),
      projectIds: new Set([ada.project_id]),
    };
    await create('beta', { tags: ['prod', 'eu'] });
    await create('Alpha', { tags: ['prod'] });
    await create('gamma', { active: false, tags: ['staging'] });
    await create('delta', {});
    await db.sql`update monitors set created_at = ${hoursAgo(24 * 60)}, status = 1 where id = ${ids.beta!}`;
    await db.sql`update monitors set created_at = ${hoursAgo(24 * 59)}, status = 2 where id = ${ids.Alpha!}`;
    await db.sql`update monitors set created_at = ${hoursAgo(24)} where id = ${ids.gamma!}`;
    await db.sql`update monitors set created_at = ${hoursAgo(5)} where id = ${ids.delta!}`;
    // beta: 2 h down 3 days ago, 30 min down 2 hours ago, 10 h down 40 days ago (outside every window)
    await incident(ids.beta!, 72, 70, 'Unexpected status 503');
    await incident(ids.beta!, 2, 1.5);
    await incident(ids.beta!, 24 * 40, 24 * 40 - 10, 'DNS lookup failed for db.internal (ENOTFOUND)');
    // Alpha: down since 6 hours ago, and 1 h down 20 days ago
    await incident(ids.Alpha!, 24 * 20, 24 * 20 - 1);
    await incident(ids.Alpha!, 6, null, 'Connection refused');
  });
  after(() => db.drop());

  const names = (items: readonly { id: string }[]) => items.map((m) => Object.keys(ids).find((k) => ids[k] === m.id));
  const search = (s: monitors.MonitorSearch, page = { page: 1, per_page: 10 }) => monitors.searchMonitors(ctx, p, ada.project_id, s, page);

  it('sorts down first, then pending, up and paused, by name within each; or by name; or oldest first', async () => {
    assert.deepEqual(names((await search({ sort: 'status' })).items), ['Alpha', 'delta', 'beta', 'gamma']);
    assert.deepEqual(names((await search({ sort: 'name' })).items), ['Alpha', 'beta', 'delta', 'gamma']);
    assert.deepEqual(names((await search({ sort: 'created' })).items), ['beta', 'Alpha', 'gamma', 'delta']);
  });

  it('narrows by status, part of the name in any case, and tag, with the count of what matches', async () => {
    const rows: [monitors.MonitorSearch, string[]][] = [
      [{ sort: 'name', status: 'down' }, ['Alpha']],
      [{ sort: 'name', status: 'up' }, ['beta']],
      [{ sort: 'name', status: 'pending' }, ['delta']],
      [{ sort: 'name', status: 'paused' }, ['gamma']],
      [{ sort: 'name', name: 'ALP' }, ['Alpha']],
      [{ sort: 'name', name: 'ta' }, ['beta', 'delta']],
      [{ sort: 'name', name: '%' }, []],
      [{ sort: 'name', tag: 'prod' }, ['Alpha', 'beta']],
      [{ sort: 'name', tag: 'prod', status: 'up' }, ['beta']],
      [{ sort: 'name', tag: 'nobody' }, []],
    ];
    for (const [s, want] of rows) {
      const { items, total } = await search(s);
      assert.deepEqual(names(items), want, JSON.stringify(s));
      assert.equal(total, want.length, JSON.stringify(s));
    }
    const second = await search({ sort: 'name' }, { page: 2, per_page: 3 });
    assert.deepEqual([names(second.items), second.total], [['gamma'], 4]);
    assert.equal((await search({ sort: 'name' }, { page: 9, per_page: 3 })).total, 4, 'a page past the end still counts');
  });

  it("lists the project's tags once each, A to Z", async () => {
    assert.deepEqual(await monitors.projectTags(ctx, p, ada.project_id), ['eu', 'prod', 'staging']);
  });

  it('gives uptime over 24 hours, 7 days and 30 days from incidents, the 30 days equal to the monitor uptime', async () => {
    const windows = await history.projectUptimeWindows(ctx, p, ada.project_id, Object.values(ids));
    const round = (v: number) => Math.round(v * 1000) / 1000;
    assert.deepEqual(windows.get(ids.beta!), {
      day: round(100 * (1 - 0.5 / 24)),
      week: round(100 * (1 - 2.5 / (7 * 24))),
      month: round(100 * (1 - 2.5 / (30 * 24))),
    });
    assert.deepEqual(windows.get(ids.Alpha!), {
      day: round(100 * (1 - 6 / 24)),
      week: round(100 * (1 - 6 / (7 * 24))),
      month: round(100 * (1 - 7 / (30 * 24))),
    });
    assert.deepEqual(windows.get(ids.delta!), { day: 100, week: 100, month: 100 }, 'younger than each window: since creation');
    for (const name of ['beta', 'Alpha']) {
      assert.equal(windows.get(ids[name]!)!.month, (await monitors.getMonitor(ctx, p, ids[name]!)).uptime, name);
    }
  });

  it('gives the incidents of the last days with the kind of their cause, never its text', async () => {
    const list = await history.projectRecentIncidents(ctx, p, ada.project_id, [ids.beta!, ids.Alpha!], 30);
    assert.deepEqual(
      list.map((i) => [names([{ id: i.monitor_id }])[0], i.kind, i.ended_at === null, i.duration]),
      [
        ['Alpha', 'timeout', false, 3600],
        ['beta', 'status', false, 7200],
        ['Alpha', 'refused', true, 6 * 3600],
        ['beta', 'timeout', false, 1800],
      ],
    );
    assert.ok(list.every((i) => !('cause' in i)));
  });

  it('tells where the last day of checks starts and ends, to open a chart on a range with data', async () => {
    assert.equal(await history.monitorRecentSpan(ctx, p, ids.delta!), null);
    await db.sql`insert into check_results ${db.sql(
      [90, 30, 2].map((m) => ({
        monitor_id: ids.delta!,
        scheduled_at: new Date(now.getTime() - m * 60_000).toISOString(),
        region: 'eu-west',
        checked_at: now.toISOString(),
        agent_id: 'a',
        ok: true,
        dns_ms: 1,
        connect_ms: 1,
        tls_ms: 1,
        ttfb_ms: 1,
        total_ms: 5,
        attempts: 1,
      })),
    )}`;
    assert.deepEqual(await history.monitorRecentSpan(ctx, p, ids.delta!), {
      oldest: '2026-03-10T10:30:00.000000Z',
      newest: '2026-03-10T11:58:00.000000Z',
    });
  });
});
