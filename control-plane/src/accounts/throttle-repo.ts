import { arrayLiteral, type Db, type Sql } from '../platform/db/sql.ts';

/** The sign-in throttle's tables: failure counters by key, and the addresses each account signed in from. */

export interface CounterRow {
  key: string;
  failures: number;
  /** The last failure, in epoch milliseconds; null: none yet. */
  last_ms: number | null;
}

/**
 * The counters of `keys`, made when missing and locked until the transaction ends. Always
 * locked in the same order, so two attempts sharing counters cannot deadlock.
 */
export async function lockCounters(tx: Db, keys: readonly string[]): Promise<CounterRow[]> {
  const sorted = arrayLiteral([...keys].sort());
  await tx`insert into sign_in_failures (key) select k from unnest(${sorted}::text[]) as k order by k on conflict do nothing`;
  return tx<CounterRow[]>`
    select key, failures, (extract(epoch from last_failure_at) * 1000)::float8 as last_ms
    from sign_in_failures where key = any(${sorted}::text[]) order by key for update`;
}

export async function writeCounters(tx: Db, counters: readonly { key: string; failures: number; at: Date }[]): Promise<void> {
  await tx`
    update sign_in_failures f set failures = v.failures, last_failure_at = v.at
    from unnest(${arrayLiteral(counters.map((c) => c.key))}::text[], ${arrayLiteral(counters.map((c) => String(c.failures)))}::int[],
      ${arrayLiteral(counters.map((c) => c.at.toISOString()))}::timestamptz[]) as v(key, failures, at)
    where f.key = v.key`;
}

export async function signedInFromSince(sql: Sql, email: string, address: string, since: Date): Promise<boolean> {
  const rows = await sql`select 1 from sign_in_addresses where email = ${email} and address = ${address} and signed_in_at > ${since}`;
  return rows.length > 0;
}

export async function deleteCounter(tx: Db, key: string): Promise<void> {
  await tx`delete from sign_in_failures where key = ${key}`;
}

/** One failure fewer on each of `keys`, never below zero. */
export async function giveBack(tx: Db, keys: readonly string[]): Promise<void> {
  await tx`update sign_in_failures set failures = greatest(failures - 1, 0) where key = any(${arrayLiteral([...keys].sort())}::text[])`;
}

export async function rememberAddress(tx: Db, email: string, address: string, at: Date): Promise<void> {
  await tx`
    insert into sign_in_addresses (email, address, signed_in_at) values (${email}, ${address}, ${at})
    on conflict (email, address) do update set signed_in_at = greatest(sign_in_addresses.signed_in_at, excluded.signed_in_at)`;
}

export async function deleteIdleCounters(sql: Sql, before: Date): Promise<void> {
  await sql`delete from sign_in_failures where last_failure_at is null or last_failure_at < ${before}`;
}

export async function deleteUnusedAddresses(sql: Sql, before: Date): Promise<void> {
  await sql`delete from sign_in_addresses where signed_in_at < ${before}`;
}
