import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { Sql } from './sql.ts';

export const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'migrations');

/** Any fixed 64-bit number: the advisory lock every migrating process queues on. */
const LOCK_KEY = 7_406_113_512_977n;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      return {
        version: Number(file.slice(0, 4)),
        name: file.slice(5, -4),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    });
}

/**
 * Applies pending migrations, each in its own transaction, while holding a session advisory
 * lock so that processes starting together apply each migration once. A migration already
 * applied whose file has since changed stops start-up: history is never rewritten.
 */
export async function migrate(sql: Sql, log: Logger, migrations = loadMigrations()): Promise<number[]> {
  const conn = await sql.reserve();
  try {
    await conn`select pg_advisory_lock(${LOCK_KEY.toString()}::bigint)`;
    await conn`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`;
    const applied = new Map(
      (await conn<{ version: number; checksum: string }[]>`select version, checksum from schema_migrations`).map((r) => [
        r.version,
        r.checksum,
      ]),
    );
    const done: number[] = [];
    for (const m of migrations) {
      const seen = applied.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum) {
          throw new Error(`migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await conn.unsafe('begin');
      try {
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
        await conn.unsafe('commit');
      } catch (err) {
        await conn.unsafe('rollback');
        throw new Error(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      log.info({ version: m.version, name: m.name }, 'migration applied');
      done.push(m.version);
    }
    return done;
  } finally {
    await conn`select pg_advisory_unlock(${LOCK_KEY.toString()}::bigint)`.catch(() => {});
    conn.release();
  }
}
