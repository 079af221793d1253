import postgres from 'postgres';
import type { Logger } from '../../../../shared/src/logger.ts';

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

/** An element of an array literal: quoted, `"` and `\` escaped, NUL (which text cannot hold) left out. */
export function arrayElement(s: string): string {
  return `"${/["\\\0]/.test(s) ? s.replace(/\0/g, '').replace(/["\\]/g, '\\$&') : s}"`;
}

/**
 * An array parameter as one Postgres array literal, null as NULL; cast it in the query
 * (`::uuid[]`). The driver's own array serializer runs two replacements per element, and
 * `sql.array` is mis-sent by queries that start before a new connection has loaded its array
 * types; batches of thousands of state writes or pings meet both.
 */
export function arrayLiteral(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    out += v === null || v === undefined ? 'NULL' : arrayElement(v);
  }
  return `${out}}`;
}

/** A statement built but not sent: awaiting it runs it, or `together` runs it with others. */
export type Statement = postgres.PendingQuery<postgres.Row[]>;

/**
 * Runs data-modifying statements as one, each in a WITH clause: one round trip instead of one
 * each (every round trip costs the batch writers a socket write and a wake-up of the server).
 * Postgres runs each to completion, all on the statement's snapshot: none sees another's rows.
 */
export async function together(tx: Db, statements: readonly Statement[]): Promise<void> {
  if (statements.length === 0) return;
  if (statements.length === 1) {
    await statements[0];
    return;
  }
  const clauses = statements.map((s, i) => tx`${tx(`w${i}`)} as (${s})`).reduce((a, b) => tx`${a}, ${b}`);
  await tx`with ${clauses} select`;
}

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
