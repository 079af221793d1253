/**
 * When to warn that something a monitor relies on runs out: its TLS certificate or its domain's
 * registration. Pure functions (the instant is a parameter); the ingest (certificates) and the
 * domain-expiry job record what they decide, each warning under a unique key, so a decision taken
 * twice sends once.
 */

const DAY_MS = 86_400_000;

/** The thresholds a monitor warns at when it names none: a month, two weeks, a week, a day before. */
export const defaultExpiryDays = [30, 14, 7, 1];

/**
 * The warning to send now, as its threshold in days: the most urgent threshold the remaining
 * time has crossed, unless it was already sent; null when none is due. Only one per call, and
 * never a less urgent one late: a warning "30 days left" that was missed (the service was off)
 * while only 5 days are left would mislead, so only the 7-day one goes out, and the caller then
 * records every threshold from it upwards as sent (thresholdsCovered).
 */
export function expiryWarningsDue(opts: { expiresAt: Date; now: Date; thresholdsDays: number[]; alreadySent: number[] }): number | null {
  const remainingMs = opts.expiresAt.getTime() - opts.now.getTime();
  const crossed = opts.thresholdsDays.filter((t) => remainingMs <= t * DAY_MS);
  if (crossed.length === 0) return null;
  const mostUrgent = Math.min(...crossed);
  return opts.alreadySent.includes(mostUrgent) ? null : mostUrgent;
}

/** The thresholds a warning at `sent` days stands for: itself and every less urgent one. */
export function thresholdsCovered(sent: number, thresholdsDays: number[]): number[] {
  return [...new Set(thresholdsDays.filter((t) => t >= sent))].sort((a, b) => a - b);
}

/** A certificate as the monitor's latest is kept: enough to tell a renewal and to date a warning. */
export interface SeenCertificate {
  fingerprint256: string;
  validTo: Date;
  /** When the check that presented it ran. */
  checkedAt: Date;
}

export interface CertificateDecision {
  /** Write it as the monitor's latest certificate. */
  store: boolean;
  /** The threshold to warn at now, or null. */
  warn: number | null;
}

/**
 * What a check's certificate changes for its monitor. The latest certificate is written only when
 * it is another one (fingerprint or expiry differ: a renewal, or a different server answering) or
 * when a warning is due, so a monitor whose certificate stays the same costs no write per check.
 * A result older than the stored one (a late region, a replay) changes nothing: it must not put an
 * old certificate back, nor warn about it. The decision is taken at the check's own time, so a
 * result handled late or twice is decided the same way; `alreadySent` are the thresholds already
 * recorded for this very certificate, so a renewed one starts over.
 */
export function certificateDecision(opts: {
  stored: SeenCertificate | null;
  seen: SeenCertificate;
  thresholdsDays: number[];
  alreadySent: number[];
}): CertificateDecision {
  const { stored, seen } = opts;
  if (stored && stored.checkedAt.getTime() > seen.checkedAt.getTime()) return { store: false, warn: null };
  const changed = !stored || stored.fingerprint256 !== seen.fingerprint256 || stored.validTo.getTime() !== seen.validTo.getTime();
  const warn = expiryWarningsDue({
    expiresAt: seen.validTo,
    now: seen.checkedAt,
    thresholdsDays: opts.thresholdsDays,
    alreadySent: opts.alreadySent,
  });
  return { store: changed || warn !== null, warn };
}
