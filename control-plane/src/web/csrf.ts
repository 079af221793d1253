import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The name of the hidden form field (and of the header a script may send instead). */
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export function sameToken(given: unknown, expected: string | undefined): boolean {
  if (typeof given !== 'string' || !expected) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function submittedToken(req: FastifyRequest): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  return body?.[CSRF_FIELD] ?? req.headers[CSRF_HEADER];
}

/**
 * A browser tells where a request comes from: a POST whose Origin is another site, or that
 * Fetch Metadata marks as cross-site, is refused before any token is looked at.
 */
export function crossSite(req: FastifyRequest): boolean {
  if (req.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}
