import postgres from 'postgres';
import type { Logger } from '../../../shared/src/logger.ts';

export type Sql = postgres.Sql;
/** A pool or an open transaction: what a repository function runs its queries on. */
export type Db = postgres.Sql | postgres.TransactionSql;

/** timestamptz as a string keeps microseconds, which Date would drop. */
export const timestamptz = {
  to: 1184,
  from: [1184],
  serialize: (v: Date | string) => (v instanceof Date ? v.toISOString() : v),
  parse: (v: string) => v,
};

export function createSql(url: string, opts: { log: Logger; max?: number; applicationName?: string }): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    idle_timeout: 60,
    connect_timeout: 10,
    // postgres.js waits up to 20 s between reconnection attempts once several failed, and a query
    // waits with them: while the database is away, requests would hang instead of failing fast
    // (503). Same growth as its default, capped at one second.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 1),
    onnotice: () => {},
    connection: { application_name: opts.applicationName ?? 'uptime', TimeZone: 'UTC', DateStyle: 'ISO, YMD' },
    types: {
      timestamptz,
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
