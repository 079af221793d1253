/**
 * Token buckets keyed by caller: `capacity` requests in a burst, refilled at `perMinute / 60` a
 * second. Kept in process memory: an abuse limit per process (a caller spread over
 * N processes gets at most N times the rate), not an accounting of quotas.
 */
export interface RateLimiter {
  /** 0 when the request may go ahead, else the seconds to wait before retrying. */
  take(key: string, now: number): number;
}

export function createRateLimiter(opts: { perMinute: number; burst?: number; maxKeys?: number }): RateLimiter {
  const capacity = opts.burst ?? opts.perMinute;
  const perMs = opts.perMinute / 60_000;
  const maxKeys = opts.maxKeys ?? 100_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key, now) {
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
        b = { tokens: capacity, at: now };
        buckets.set(key, b);
      }
      b.tokens = Math.min(capacity, b.tokens + (now - b.at) * perMs);
      b.at = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    },
  };
}
