/**
 * Errors that say the database cannot be reached or cannot serve right now (stopped, restarting,
 * failing over, out of connections), as opposed to a fault in a query: the API answers them with
 * 503 and Retry-After, the way it answers any dependency that is away.
 */
const connectionCodes = new Set([
  // The socket: refused, reset, unreachable, or a name that does not resolve (yet).
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // postgres.js: a connection that closed, or never opened, under a query.
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

// SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down), too_many_connections.
const serverCodes = new Set(['57P01', '57P02', '57P03', '53300']);

export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string') return false;
  // Class 08: connection exceptions.
  return connectionCodes.has(code) || serverCodes.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

export const databaseUnavailableMessage = 'Service temporarily unavailable: the database cannot be reached. Try again in a few seconds.';
