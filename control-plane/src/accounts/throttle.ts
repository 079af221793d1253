import type { Sql } from '../platform/db/sql.ts';
import { FORGET_AFTER_MS, noFailures, signInTiers, verdict, type Counters, type TierName, type Verdict } from './throttle-rule.ts';
import * as repo from './throttle-repo.ts';

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
  return sql.begin(async (tx) => {
    const rows = await repo.lockCounters(
      tx,
      names.map((n) => keys[n]!),
    );
    const byKey = new Map(rows.map((r) => [r.key, r]));
    const counters: Counters = {};
    for (const n of names) {
      const r = byKey.get(keys[n]!);
      counters[n] = r ? { count: r.failures, lastAt: r.last_ms } : noFailures;
    }
    const v = verdict(counters, now.getTime());
    if (!v.allowed) return v;
    await repo.writeCounters(
      tx,
      names.map((n) => ({ key: keys[n]!, failures: v.counters[n]!.count, at: new Date(v.counters[n]!.lastAt!) })),
    );
    return v;
  });
}

export async function reserveSignIn(sql: Sql, email: string, address: string, now: Date): Promise<Reservation> {
  const e = normalEmail(email);
  const since = new Date(now.getTime() - KNOWN_ADDRESS_DAYS * 86_400_000);
  const names = signInTiers(await repo.signedInFromSince(sql, e, address, since));
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
  const given = r.counted.filter((n) => n !== 'pair').map((n) => keyOf(n, r.email, r.address));
  await sql.begin(async (tx) => {
    await repo.deleteCounter(tx, keyOf('pair', r.email, r.address));
    await repo.giveBack(tx, given);
    await repo.rememberAddress(tx, r.email, r.address, now);
  });
}

/** Counters forgotten, and addresses not signed in from for long, hold nothing worth keeping. */
export async function purgeSignInAttempts(sql: Sql, now: Date): Promise<void> {
  await repo.deleteIdleCounters(sql, new Date(now.getTime() - FORGET_AFTER_MS));
  await repo.deleteUnusedAddresses(sql, new Date(now.getTime() - KNOWN_ADDRESS_DAYS * 86_400_000));
}

/**
 * A guess at a private status page's password (ADR 0041), counted as sign-in attempts are: per
 * (page, address) and per address, the latter shared with sign-in, so one address cannot guess
 * at pages and accounts in turn to get more tries.
 */
export async function reservePagePassword(sql: Sql, pageId: string, address: string, now: Date): Promise<Reservation> {
  const page = `status-page:${pageId}`;
  const v = await reserve(sql, { pair: keyOf('pair', page, address), address: keyOf('address', '', address) }, now);
  return v.allowed ? { allowed: true, email: page, address, counted: ['pair', 'address'] } : v;
}

/** The right page password: this address's failures on the page are forgotten and the address gets the attempt back. */
export async function pagePasswordSucceeded(sql: Sql, r: Extract<Reservation, { allowed: true }>): Promise<void> {
  await sql.begin(async (tx) => {
    await repo.deleteCounter(tx, keyOf('pair', r.email, r.address));
    await repo.giveBack(tx, [keyOf('address', '', r.address)]);
  });
}
