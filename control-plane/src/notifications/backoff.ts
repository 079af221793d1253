export interface Backoff {
  /** Wait after the first failed attempt; each further failure doubles it. */
  baseMs: number;
  capMs: number;
}

export const defaultBackoff: Backoff = { baseMs: 5_000, capMs: 30 * 60_000 };

export type AfterFailure = { kind: 'dead' } | { kind: 'retry'; delayMs: number };

/**
 * What follows failed attempt `attempt` (1-based): dead when the failure is permanent or the
 * attempts are used up, else a retry after base · 2^(attempt-1), capped. A receiver's own
 * Retry-After wins when it asks for longer (up to the cap).
 */
export function afterFailure(
  attempt: number,
  maxAttempts: number,
  failure: { permanent: boolean; retryAfterMs?: number | undefined },
  backoff: Backoff = defaultBackoff,
): AfterFailure {
  if (failure.permanent || attempt >= maxAttempts) return { kind: 'dead' };
  const exponential = backoff.baseMs * 2 ** Math.max(0, attempt - 1);
  const delayMs = Math.min(backoff.capMs, Math.max(exponential, failure.retryAfterMs ?? 0));
  return { kind: 'retry', delayMs: Math.round(delayMs) };
}
