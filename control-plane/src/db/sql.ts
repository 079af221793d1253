import postgres from 'postgres';
import type { Logger } from '../../../shared/src/logger.ts';

export type Sql = postgres.Sql;
/** A pool or an open transaction: what a repository function runs its queries on. */
export type Db = postgres.Sql | postgres.TransactionSql;

export function createSql(url: string, opts: { log: Logger; max?: number; applicationName?: string }): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    idle_timeout: 60,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: opts.applicationName ?? 'uptime', TimeZone: 'UTC', DateStyle: 'ISO, YMD' },
    types: {
      // timestamptz as a string keeps microseconds, which Date would drop.
      timestamptz: {
        to: 1184,
        from: [1184],
        serialize: (v: Date | string) => (v instanceof Date ? v.toISOString() : v),
        parse: (v: string) => v,
      },
    },
  });
}

/** True when the database answers a trivial query within the time limit. */
export async function sqlAlive(sql: Sql, timeoutMs = 1_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      sql`select 1`.then(() => true),
      new Promise<false>((r) => {
        timer = setTimeout(() => r(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
