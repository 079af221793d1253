import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createSql, type Sql } from '../platform/db/sql.ts';
import { openInfra } from '../runtime/infra.ts';

/**
 * Runs `fn` against the server's database: DATABASE_URL, or the embedded Postgres in DATA_DIR
 * (joined when `npm start` is running, started briefly otherwise). The result line is printed
 * last, after every child has stopped, so it is the final stdout line.
 */
export async function withDatabase(ctx: { config: Config; log: Logger }, fn: (sql: Sql) => Promise<string>): Promise<void> {
  const { config, log } = ctx;
  const infra = await openInfra(config, log, { postgres: true, nats: false });
  const sql = createSql(infra.databaseUrl!, { log, max: 2 });
  let out: string;
  try {
    await migrate(sql, log);
    out = await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await infra.stop();
  }
  process.stdout.write(`${out}\n`);
}

export async function migrateCommand(ctx: { config: Config; log: Logger }): Promise<void> {
  const { config, log } = ctx;
  const infra = await openInfra(config, log, { postgres: true, nats: false });
  const sql = createSql(infra.databaseUrl!, { log, max: 1 });
  try {
    const applied = await migrate(sql, log);
    process.stderr.write(applied.length ? `applied migrations ${applied.join(', ')}\n` : 'database is up to date\n');
  } finally {
    await sql.end({ timeout: 5 });
    await infra.stop();
  }
}
