/**
 * The sign-in throttle as a rule: failures counted per (account, client address), per account and
 * per address, each allowing some failures freely and then a delay that doubles with every further
 * failure, up to a cap. Keyed by the pair first, so an attacker on one address slows only that
 * address's guesses at that account: the user signing in from elsewhere is not locked out.
 * Times are epoch milliseconds; the clock is the caller's.
 */
export interface Failures {
  count: number;
  /** When the last failure (or attempt, while it is being checked) was counted; null: never. */
  lastAt: number | null;
}

export interface Tier {
  /** Failures allowed before any delay. */
  free: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

const minute = 60_000;

/** A counter without a failure for this long starts again from zero. */
export const FORGET_AFTER_MS = 60 * minute;

export const tiers = {
  /** One address guessing one account. */
  pair: { free: 5, firstDelayMs: minute, maxDelayMs: 15 * minute },
  /** Every address the account never signed in from, together: guesses spread over many addresses. */
  account: { free: 20, firstDelayMs: minute, maxDelayMs: 15 * minute },
  /** One address, whatever the account: guessing across accounts. */
  address: { free: 30, firstDelayMs: minute, maxDelayMs: 15 * minute },
} as const satisfies Record<string, Tier>;

export type TierName = keyof typeof tiers;
export type Counters = Partial<Record<TierName, Failures>>;

export const noFailures: Failures = { count: 0, lastAt: null };

/** The counter as it stands at `now`: forgotten after an hour without a failure. */
export function current(f: Failures, now: number): Failures {
  return f.lastAt === null || now - f.lastAt >= FORGET_AFTER_MS ? noFailures : f;
}

/** When the next attempt may be made: at once (`now`) below `free` failures, else the last one plus the delay. */
export function nextAttemptAt(f: Failures, tier: Tier, now: number): number {
  const c = current(f, now);
  if (c.count < tier.free || c.lastAt === null) return now;
  const delay = Math.min(tier.maxDelayMs, tier.firstDelayMs * 2 ** (c.count - tier.free));
  return Math.max(now, c.lastAt + delay);
}

/**
 * The tiers a sign-in attempt is checked and counted against. From an address the account signed
 * in from before, the per-account tier does not apply: however many addresses guess at an
 * account, its user still gets in from theirs.
 */
export function signInTiers(knownAddress: boolean): TierName[] {
  return knownAddress ? ['pair', 'address'] : ['pair', 'account', 'address'];
}

export type Verdict = { allowed: true; counters: Counters } | { allowed: false; retryAfterSeconds: number; by: TierName };

/**
 * Whether an attempt may go ahead now, and if so the counters with it counted (it is counted as
 * a failure before the password is checked, so parallel guesses cannot slip past; a success
 * gives it back). Refused: the seconds until every tier lets an attempt through.
 */
export function verdict(counters: Counters, now: number): Verdict {
  let latest = now;
  let by: TierName | undefined;
  for (const name of Object.keys(counters) as TierName[]) {
    const at = nextAttemptAt(counters[name]!, tiers[name], now);
    if (at > latest) {
      latest = at;
      by = name;
    }
  }
  if (by) return { allowed: false, retryAfterSeconds: Math.ceil((latest - now) / 1000), by };
  const counted: Counters = {};
  for (const name of Object.keys(counters) as TierName[]) {
    const c = current(counters[name]!, now);
    // Never back in time: another process's clock may be a little ahead of this one.
    counted[name] = { count: c.count + 1, lastAt: Math.max(now, c.lastAt ?? now) };
  }
  return { allowed: true, counters: counted };
}
