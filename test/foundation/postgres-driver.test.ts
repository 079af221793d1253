import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSql, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { isDatabaseUnavailable } from '../../control-plane/src/platform/db/unavailable.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';

/**
 * The Postgres driver when a server connection dies under it (a restart, a failover), with the
 * repairs of patches/postgres.mjs: errors a caller can catch, never a crash of the process.
 */
describe('Postgres driver when a connection dies', () => {
  let db: TestDatabase;
  let sql: Sql;
  before(async () => {
    db = await createTestDatabase({ migrate: false });
    sql = createSql(db.url, { log: quietLog, max: 2 });
  });
  after(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });

  it('fails a transaction whose server process died, instead of crashing the process', async () => {
    const crashes: unknown[] = [];
    const onCrash = (err: unknown) => crashes.push(err);
    process.on('uncaughtException', onCrash);
    try {
      const outcome = await Promise.race([
        sql
          .begin(async (tx) => {
            const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
            await db.sql`select pg_terminate_backend(${row!.pid})`;
            await new Promise((r) => setTimeout(r, 100));
            // Fails; the ROLLBACK that follows is written on the closed connection.
            await tx`select 1`;
          })
          .then(
            () => 'committed',
            (err: unknown) => err,
          ),
        new Promise((r) => setTimeout(() => r('no answer within 5 s'), 5_000)),
      ]);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(crashes, []);
      assert.ok(isDatabaseUnavailable(outcome), `a connection error, got ${String(outcome)}`);
    } finally {
      process.off('uncaughtException', onCrash);
    }
  });

  it('serves queries again on the same pool', async () => {
    for (let i = 0; i < 3; i++) {
      const [row] = await sql<{ n: number }[]>`select ${i}::int as n`;
      assert.equal(row!.n, i);
    }
  });
});
