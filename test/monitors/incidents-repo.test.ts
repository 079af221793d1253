import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyIncidentChange } from '../../control-plane/src/monitors/incidents/repo.ts';
import type { RegionEvidence } from '../../control-plane/src/monitors/incidents/rules.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const t0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();

describe("writing a monitor's incidents", () => {
  let db: TestDatabase;
  let ada: TestAccount;
  before(async () => {
    db = await createTestDatabase();
    ada = await createAccount(db.sql);
  });
  after(() => db.drop());

  const monitor = async () => {
    const [m] = await db.sql<{ id: string }[]>`
      insert into monitors (project_id, name, url, valid_http_codes) values (${ada.project_id}, 'm', 'https://m.example', '{200}') returning id`;
    return m!.id;
  };
  /** The monitor's incidents, instants as ISO strings. */
  const incidents = async (id: string) =>
    (
      await db.sql<{ id: string; started: number; ended: number | null; cause: string; regions: string[] }[]>`
        select id, (extract(epoch from started_at) * 1000)::float8 as started, (extract(epoch from ended_at) * 1000)::float8 as ended,
          cause, regions
        from incidents where monitor_id = ${id} order by started_at`
    ).map(({ started, ended, ...r }) => ({
      ...r,
      started_at: new Date(started).toISOString(),
      ended_at: ended === null ? null : new Date(ended).toISOString(),
    }));
  const open = (started: number, cause = 'timeout', regions = ['eu']) =>
    ({ type: 'open', started_at: at(started), cause, regions, evidence: [] as RegionEvidence[] }) as const;
  const close = (ended: number) => ({ type: 'close', ended_at: at(ended) }) as const;

  it('opens one incident per monitor: a second open while one is open applies nothing', async () => {
    const m = await monitor();
    const opened = await applyIncidentChange(db.sql, m, open(0, 'Unexpected status 503', ['eu', 'us']));
    assert.ok(opened && opened.type === 'open');
    assert.deepEqual(await applyIncidentChange(db.sql, m, open(30, 'later')), null);
    const [row, ...rest] = await incidents(m);
    assert.equal(rest.length, 0);
    assert.equal(row!.id, opened.incident_id);
    assert.equal(row!.started_at, at(0));
    assert.equal(row!.ended_at, null);
    assert.equal(row!.cause, 'Unexpected status 503');
    assert.deepEqual(row!.regions, ['eu', 'us']);
  });

  it('closes the open incident with its duration in whole seconds, then opens a new one', async () => {
    const m = await monitor();
    const opened = await applyIncidentChange(db.sql, m, open(0));
    const closed = await applyIncidentChange(db.sql, m, close(120.9));
    assert.deepEqual(closed, { type: 'close', ended_at: at(120.9), incident_id: opened!.incident_id, duration_seconds: 120 });
    assert.equal((await incidents(m))[0]!.ended_at, at(120.9));
    const next = await applyIncidentChange(db.sql, m, open(300));
    assert.ok(next);
    assert.notEqual(next.incident_id, opened!.incident_id);
    assert.equal((await incidents(m)).length, 2);
  });

  it('closes nothing when no incident is open', async () => {
    const m = await monitor();
    assert.equal(await applyIncidentChange(db.sql, m, close(10)), null);
    await applyIncidentChange(db.sql, m, open(0));
    await applyIncidentChange(db.sql, m, close(10));
    assert.equal(await applyIncidentChange(db.sql, m, close(20)), null);
    assert.equal((await incidents(m))[0]!.ended_at, at(10));
  });

  it('never ends an incident before it started', async () => {
    const m = await monitor();
    const opened = await applyIncidentChange(db.sql, m, open(60));
    const closed = await applyIncidentChange(db.sql, m, close(30));
    assert.deepEqual(closed, { type: 'close', ended_at: at(30), incident_id: opened!.incident_id, duration_seconds: 0 });
    assert.equal((await incidents(m))[0]!.ended_at, at(60));
  });

  it('touches only the monitor it is given', async () => {
    const a = await monitor();
    const b = await monitor();
    await applyIncidentChange(db.sql, a, open(0));
    await applyIncidentChange(db.sql, b, open(0));
    await applyIncidentChange(db.sql, a, close(10));
    assert.equal((await incidents(b))[0]!.ended_at, null);
  });

  it('runs in the caller transaction', async () => {
    const m = await monitor();
    await assert.rejects(
      db.sql.begin(async (tx) => {
        await applyIncidentChange(tx, m, open(0));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.deepEqual(await incidents(m), []);
  });
});
