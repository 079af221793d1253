import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate } from '../../control-plane/src/platform/db/migrate.ts';
import { createSql, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { requireTestEnv } from './env.ts';
import { testLog } from './log.ts';

export interface TestDatabase {
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

/** The components' logger in tests (see log.ts: captured to a file under test/run.ts). */
export const quietLog = testLog;

/** A fresh, migrated database of its own for one test file. */
export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = requireTestEnv('pg');
  const name = `uptime_t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = createSql(url.toString(), { log: quietLog, max: 5 });
  if (opts.migrate !== false) await migrate(sql, quietLog);
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
