import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadMigrations, migrate } from '../../control-plane/src/platform/db/migrate.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';

describe('migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  after(() => db.drop());

  it('applies every migration once when several processes start together', async () => {
    const runs = await Promise.all([migrate(db.sql, quietLog), migrate(db.sql, quietLog), migrate(db.sql, quietLog)]);
    const applied = runs.flat().sort((a, b) => a - b);
    assert.deepEqual(
      applied,
      loadMigrations().map((m) => m.version),
    );
    const rows = await db.sql<{ version: number }[]>`select version from schema_migrations order by version`;
    assert.deepEqual(
      rows.map((r) => r.version),
      applied,
    );
  });

  it('applies nothing the second time', async () => {
    assert.deepEqual(await migrate(db.sql, quietLog), []);
  });

  it('refuses to start when an applied migration was edited', async () => {
    const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited`, checksum: 'changed' } : m));
    await assert.rejects(migrate(db.sql, quietLog, edited), /was changed after it was applied/);
  });

  it('rolls a failing migration back and reports which one failed', async () => {
    const broken = [...loadMigrations(), { version: 9999, name: 'broken', sql: 'create table t9999 (x int); select nope;', checksum: 'x' }];
    await assert.rejects(migrate(db.sql, quietLog, broken), /9999_broken failed/);
    const [t] = await db.sql`select to_regclass('t9999') as t`;
    assert.equal(t!.t, null);
  });
});
