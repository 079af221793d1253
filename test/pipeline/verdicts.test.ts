import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CheckResult } from '../../shared/src/contracts/monitoring.ts';
import { storeResults } from '../../control-plane/src/monitors/ingest/store.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const t0 = Date.parse('2026-11-26T10:00:00.000Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000);

function result(monitorId: string, region: string, minute: number, ok: boolean): CheckResult {
  return {
    monitor_id: monitorId,
    region,
    agent_id: `agent-${region}`,
    scheduled_at: at(minute).toISOString(),
    checked_at: new Date(at(minute).getTime() + 5).toISOString(),
    ok,
    status_code: ok ? 200 : 503,
    timings: { dns: 1, connect: 2, tls: 0, ttfb: 5, total: 12.5 },
    error: ok ? null : { class: 'status', message: 'Unexpected status 503' },
    attempts: ok ? 1 : 2,
  };
}

describe('verdicts of the ingest: quorum, confirmation, abstaining regions, evidence', () => {
  let db: TestDatabase;
  let ada: TestAccount;
  before(async () => {
    db = await createTestDatabase();
    ada = await createAccount(db.sql);
  });
  after(() => db.drop());

  const monitor = async (o: { regions?: string[]; quorum?: number; confirmDown?: number; confirmUp?: number } = {}) => {
    const [m] = await db.sql<{ id: string }[]>`
      insert into monitors (project_id, name, url, valid_http_codes, regions, quorum, confirm_down, confirm_up)
      values (${ada.project_id}, 'm', 'https://m.example', '{200}', ${o.regions ?? null}::text[], ${o.quorum ?? null},
        ${o.confirmDown ?? 1}, ${o.confirmUp ?? 1})
      returning id`;
    return m!.id;
  };
  const status = async (id: string) => (await db.sql<{ status: number }[]>`select status from monitors where id = ${id}`)[0]!.status;
  const incidents = (id: string) =>
    db.sql<{ started_at: Date; ended_at: Date | null; regions: string[]; evidence: unknown[] }[]>`
      select started_at, ended_at, regions, evidence from incidents where monitor_id = ${id} order by started_at`;
  const degrade = (region: string) =>
    db.sql`insert into region_health (region, state, reason, since) values (${region}, 'degraded', 'canaries', ${at(0)})
      on conflict (region) do update set state = 'degraded', reason = 'canaries'`;
  const heal = (region: string) => db.sql`update region_health set state = 'healthy', reason = null where region = ${region}`;

  it('with quorum 1, goes down when one of three regions fails, and keeps what every region saw', async () => {
    const id = await monitor({ quorum: 1 });
    const events = await storeResults(db.sql, [result(id, 'eu', 0, false), result(id, 'us', 0, true), result(id, 'ap', 0, true)], at(1));
    assert.deepEqual(
      events.map((e) => e.kind),
      ['monitor.down'],
    );
    const evidence = [
      { region: 'ap', ok: true, status_code: 200, error: null, total_ms: 12.5, scheduled_at: at(0).toISOString(), abstained: false },
      {
        region: 'eu',
        ok: false,
        status_code: 503,
        error: 'Unexpected status 503',
        total_ms: 12.5,
        scheduled_at: at(0).toISOString(),
        abstained: false,
      },
      { region: 'us', ok: true, status_code: 200, error: null, total_ms: 12.5, scheduled_at: at(0).toISOString(), abstained: false },
    ];
    assert.deepEqual(events[0]!.data.evidence, evidence);
    const [incident] = await incidents(id);
    assert.deepEqual(incident!.evidence, evidence);
    assert.deepEqual(incident!.regions, ['eu']);
  });

  it('goes down on the third failing round only, dated from the first, and a redelivered round counts once', async () => {
    const id = await monitor({ confirmDown: 3 });
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 0, true)], at(0)), []);
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 1, false)], at(1)), []);
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 1, false)], at(1)), [], 'a redelivered batch');
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 2, false)], at(2)), []);
    assert.equal(await status(id), 1);
    const events = await storeResults(db.sql, [result(id, 'eu', 3, false)], at(3));
    assert.deepEqual(
      events.map((e) => [e.kind, e.occurred_at]),
      [['monitor.down', at(1).toISOString()]],
    );
    assert.equal(await status(id), 2);
  });

  it('a passing round between failing ones starts the count again', async () => {
    const id = await monitor({ confirmDown: 2 });
    await storeResults(db.sql, [result(id, 'eu', 0, false)], at(0));
    await storeResults(db.sql, [result(id, 'eu', 1, true)], at(1));
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 2, false)], at(2)), []);
    assert.deepEqual(
      (await storeResults(db.sql, [result(id, 'eu', 3, false)], at(3))).map((e) => e.kind),
      ['monitor.down'],
    );
  });

  it('stays down until two passing rounds, and closes the incident at the first of them', async () => {
    const id = await monitor({ confirmUp: 2 });
    await storeResults(db.sql, [result(id, 'eu', 0, false)], at(0));
    assert.equal(await status(id), 2);
    assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 1, true)], at(1)), []);
    assert.equal(await status(id), 2);
    const events = await storeResults(db.sql, [result(id, 'eu', 2, true)], at(2));
    assert.deepEqual(
      events.map((e) => [e.kind, e.occurred_at]),
      [['monitor.up', at(1).toISOString()]],
    );
    const [incident] = await incidents(id);
    assert.equal(new Date(incident!.ended_at!).toISOString(), at(1).toISOString());
  });

  it('sets a degraded region aside: its failures put nothing down, and the regions left decide', async () => {
    const id = await monitor({ regions: ['eu', 'us'] });
    await degrade('eu');
    try {
      assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 0, false), result(id, 'us', 0, true)], at(1)), []);
      assert.equal(await status(id), 1);
      // Majority of one voting region: us failing alone is down, with eu marked as abstaining.
      const events = await storeResults(db.sql, [result(id, 'eu', 1, false), result(id, 'us', 1, false)], at(2));
      assert.deepEqual(
        events.map((e) => e.kind),
        ['monitor.down'],
      );
      assert.deepEqual(events[0]!.data.regions, ['us']);
      assert.deepEqual(
        (events[0]!.data.evidence as { region: string; abstained: boolean }[]).map((e) => [e.region, e.abstained]),
        [
          ['eu', true],
          ['us', false],
        ],
      );
    } finally {
      await heal('eu');
    }
  });

  it('keeps the status while every region with a fresh result is degraded', async () => {
    const id = await monitor({ regions: ['eu'] });
    await storeResults(db.sql, [result(id, 'eu', 0, true)], at(0));
    await degrade('eu');
    try {
      assert.deepEqual(await storeResults(db.sql, [result(id, 'eu', 1, false)], at(1)), []);
      assert.equal(await status(id), 1);
    } finally {
      await heal('eu');
    }
    // Trusted again: the next failing round counts.
    assert.deepEqual(
      (await storeResults(db.sql, [result(id, 'eu', 2, false)], at(2))).map((e) => e.kind),
      ['monitor.down'],
    );
  });
});
