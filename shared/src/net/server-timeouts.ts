import type { Config } from '../config.ts';

type TimeoutSettings = Pick<
  Config,
  'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_IDLE_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
>;

/**
 * Fastify server options that cut slow clients off: headers and whole requests must arrive in
 * time (408 and the connection closed otherwise), a stalled connection is dropped, an idle
 * kept-alive one is closed. Node checks the first two on a timer of its own (30 s by default,
 * which would let a slow client stay up to that much longer); here it ticks at most every second.
 */
export function serverTimeouts(c: TimeoutSettings) {
  const requestTimeout = c.HTTP_REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(c.HTTP_HEADERS_TIMEOUT_MS, requestTimeout);
  return {
    requestTimeout,
    connectionTimeout: c.HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeout: c.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
    },
  };
}
