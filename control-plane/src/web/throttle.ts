import type { Sql } from '../db/sql.ts';

/**
 * Sign-in attempts per fixed window, per email and per client address. Kept in Postgres, so
 * every control-plane process counts into the same window. An attempt is counted before the
 * password is checked (so parallel guesses cannot slip past the limit) and given back when it
 * succeeds: in effect the limits count failures.
 */
export const signInLimits = {
  windowSeconds: 15 * 60,
  perEmail: 5,
  perAddress: 30,
} as const;

export type Reservation = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const emailKey = (email: string) => `email:${email.trim().toLowerCase()}`;
const addressKey = (ip: string) => `ip:${ip}`;

export async function reserveSignIn(sql: Sql, email: string, ip: string, now: Date): Promise<Reservation> {
  const windowStartedBefore = new Date(now.getTime() - signInLimits.windowSeconds * 1000);
  const rows = await sql<{ key: string; attempts: number; window_start: string }[]>`
    insert into sign_in_attempts (key, window_start, attempts)
    values (${emailKey(email)}, ${now}, 1), (${addressKey(ip)}, ${now}, 1)
    on conflict (key) do update set
      attempts = case when sign_in_attempts.window_start <= ${windowStartedBefore} then 1 else sign_in_attempts.attempts + 1 end,
      window_start = case when sign_in_attempts.window_start <= ${windowStartedBefore} then excluded.window_start else sign_in_attempts.window_start end
    returning key, attempts, to_char(window_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as window_start`;
  let retryAfter = 0;
  for (const r of rows) {
    const limit = r.key.startsWith('email:') ? signInLimits.perEmail : signInLimits.perAddress;
    if (r.attempts > limit) {
      const endsAt = Date.parse(r.window_start) + signInLimits.windowSeconds * 1000;
      retryAfter = Math.max(retryAfter, Math.ceil((endsAt - now.getTime()) / 1000));
    }
  }
  return retryAfter > 0 ? { allowed: false, retryAfterSeconds: retryAfter } : { allowed: true };
}

/** A successful sign-in clears the email's count and gives the address its attempt back. */
export async function signInSucceeded(sql: Sql, email: string, ip: string): Promise<void> {
  await sql`delete from sign_in_attempts where key = ${emailKey(email)}`;
  await sql`update sign_in_attempts set attempts = greatest(attempts - 1, 0) where key = ${addressKey(ip)}`;
}

/** Windows that ended long ago hold nothing worth keeping. */
export async function purgeSignInAttempts(sql: Sql, now: Date): Promise<void> {
  await sql`delete from sign_in_attempts where window_start < ${new Date(now.getTime() - 2 * signInLimits.windowSeconds * 1000)}`;
}
