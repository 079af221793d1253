import { arrayLiteral, type Sql } from '../platform/db/sql.ts';
import { FORGET_AFTER_MS, noFailures, signInTiers, verdict, type Counters, type TierName, type Verdict } from './throttle-rule.ts';

/**
 * The sign-in throttle's counters, in Postgres so every control-plane process counts into the
 * same ones (the rule is throttle-rule.ts). An attempt is counted before the password is checked,
 * under the counters' row locks, so parallel guesses cannot slip past; a success gives it back.
 */

/** How long an address an account signed in from stays exempt from the per-account tier. */
const KNOWN_ADDRESS_DAYS = 30;

const normalEmail = (email: string) => email.trim().toLowerCase();

function keyOf(tier: TierName, email: string, address: string): string {
  if (tier === 'pair') return `pair:${address} ${email}`;
  return tier === 'account' ? `account:${email}` : `address:${address}`;
}

export type Reservation =
  { allowed: true; email: string; address: string; counted: TierName[] } | { allowed: false; retryAfterSeconds: number; by: TierName };

/** Checks the named counters at `now` and, when the attempt may go ahead, counts it in each. */
async function reserve(sql: Sql, keys: Partial<Record<TierName, string>>, now: Date): Promise<Verdict> {
  const names = Object.keys(keys) as TierName[];
  // Always locked in the same order, so two attempts sharing counters cannot deadlock.
  const sorted = arrayLiteral(names.map((n) => keys[n]!).sort());
  return sql.begin(async (tx) => {
    await tx`insert into sign_in_failures (key) select k from unnest(${sorted}::text[]) as k order by k on conflict do nothing`;
    const rows = await tx<{ key: string; failures: number; last_ms: number | null }[]>`
      select key, failures, (extract(epoch from last_failure_at) * 1000)::float8 as last_ms
      from sign_in_failures where key = any(${sorted}::text[]) order by key for update`;
    const byKey = new Map(rows.map((r) => [r.key, r]));
    const counters: Counters = {};
    for (const n of names) {
      const r = byKey.get(keys[n]!);
      counters[n] = r ? { count: r.failures, lastAt: r.last_ms } : noFailures;
    }
    const v = verdict(counters, now.getTime());
    if (!v.allowed) return v;
    const counted = names.map((n) => v.counters[n]!);
    await tx`
      update sign_in_failures f set failures = v.failures, last_failure_at = v.at
      from unnest(${arrayLiteral(names.map((n) => keys[n]!))}::text[], ${arrayLiteral(counted.map((c) => String(c.count)))}::int[],
        ${arrayLiteral(counted.map((c) => new Date(c.lastAt!).toISOString()))}::timestamptz[]) as v(key, failures, at)
      where f.key = v.key`;
    return v;
  });
}

export async function reserveSignIn(sql: Sql, email: string, address: string, now: Date): Promise<Reservation> {
  const e = normalEmail(email);
  const since = new Date(now.getTime() - KNOWN_ADDRESS_DAYS * 86_400_000);
  const known = await sql`select 1 from sign_in_addresses where email = ${e} and address = ${address} and signed_in_at > ${since}`;
  const names = signInTiers(known.length > 0);
  const v = await reserve(sql, Object.fromEntries(names.map((n) => [n, keyOf(n, e, address)])), now);
  return v.allowed ? { allowed: true, email: e, address, counted: names } : v;
}

/** Sign-ups count against the address, so accounts cannot be mass-created from one; never given back. */
export async function reserveSignUp(sql: Sql, address: string, now: Date): Promise<Reservation> {
  const v = await reserve(sql, { address: keyOf('address', '', address) }, now);
  return v.allowed ? { allowed: true, email: '', address, counted: ['address'] } : v;
}

/**
 * The right password: this address's failures on the account are forgotten (whoever is there
 * knows it), the account and the address get the attempt back, and the address is remembered
 * as one the account signs in from.
 */
export async function signInSucceeded(sql: Sql, r: Extract<Reservation, { allowed: true }>, now: Date): Promise<void> {
  const given = arrayLiteral(
    r.counted
      .filter((n) => n !== 'pair')
      .map((n) => keyOf(n, r.email, r.address))
      .sort(),
  );
  await sql.begin(async (tx) => {
    await tx`delete from sign_in_failures where key = ${keyOf('pair', r.email, r.address)}`;
    await tx`update sign_in_failures set failures = greatest(failures - 1, 0) where key = any(${given}::text[])`;
    await tx`
      insert into sign_in_addresses (email, address, signed_in_at) values (${r.email}, ${r.address}, ${now})
      on conflict (email, address) do update set signed_in_at = greatest(sign_in_addresses.signed_in_at, excluded.signed_in_at)`;
  });
}

/** Counters forgotten, and addresses not signed in from for long, hold nothing worth keeping. */
export async function purgeSignInAttempts(sql: Sql, now: Date): Promise<void> {
  await sql`delete from sign_in_failures where last_failure_at is null or last_failure_at < ${new Date(now.getTime() - FORGET_AFTER_MS)}`;
  await sql`delete from sign_in_addresses where signed_in_at < ${new Date(now.getTime() - KNOWN_ADDRESS_DAYS * 86_400_000)}`;
}
