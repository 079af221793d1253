/**
 * A failed delivery attempt. `permanent` failures (the receiver refused the message: a 4xx other
 * than 408 and 429, a bad address, a refused recipient) are dead at once; the others are
 * retried with back-off. `retryAfterMs` carries a receiver's own Retry-After.
 */
export class DeliveryError extends Error {
  readonly permanent: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { permanent: boolean; retryAfterMs?: number | undefined }) {
    super(message);
    this.name = 'DeliveryError';
    this.permanent = opts.permanent;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Any failure as a DeliveryError: an unexpected one is retried (it may be ours, and passing). */
export function asDeliveryError(err: unknown): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const e = err as { code?: string; message?: string };
  return new DeliveryError(`${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`, { permanent: false });
}

/** Removes every secret value from a text that may be stored or logged (an error message). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out.length > 1000 ? `${out.slice(0, 1000)}…` : out;
}
