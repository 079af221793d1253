/** A `token` in a query string (the key of a notify URL) never reaches a log line. */
export const redactedUrl = (url: string) => url.replace(/([?&;]token=)[^&#;]*/gi, '$1[redacted]');

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
  raw?: { method?: string; url?: string };
}

/**
 * How every request appears in the access log: Fastify's fields, with the URL redacted. On the
 * root logger, so that a request no route takes (an unknown path, a method the path does not
 * have) is covered like the rest. The logger may hand over a plain copy: read the raw request too.
 */
export function requestLogFields(req: LoggedRequest) {
  return {
    method: req.method ?? req.raw?.method,
    url: redactedUrl(String(req.url ?? req.raw?.url ?? '')),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}
