/**
 * What a log line says about an HTTP request: one serializer for every server and every route,
 * 404s included, so a secret a client put in a URL never reaches a log, however it was spelled.
 */

const REDACTED = '[redacted]';

/** Query and matrix parameters whose values are secrets, compared after decoding and lower-casing. */
const secretParam =
  /^(token|.*_token|access_key|api_key|apikey|key|password|.*_password|secret|.*_secret|sig|signature|_csrf|csrf|authorization|routing_key)$/;

/** One of our tokens, whole or nearly so (prefix and a long base64url run). */
const tokenShape = /upt[mt]?_[A-Za-z0-9_-]{16,}/;

/** Percent-decoding that never throws: a malformed sequence is left as it is, a bad UTF-8 byte read as Latin-1. */
function decodeOnce(s: string): string {
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
    }
  });
}

/** Decoded until nothing changes (a name encoded twice is still that name to a careless parser). */
export function decodeComponent(s: string): string {
  let out = s.replace(/\+/g, ' ');
  for (let i = 0; i < 5; i++) {
    const next = decodeOnce(out);
    if (next === out) break;
    out = next;
  }
  return out;
}

/** `token`, ` Token `, `token[]`, `TOKEN`: the name a parser would see, normalised. */
function paramName(raw: string): string {
  return decodeComponent(raw)
    .replace(/\[[^\]]*\]$/, '')
    .trim()
    .toLowerCase();
}

function redactParam(piece: string): string {
  const eq = piece.indexOf('=');
  const name = eq === -1 ? piece : piece.slice(0, eq);
  if (eq !== -1 && secretParam.test(paramName(name))) return `${name}=${REDACTED}`;
  if (!tokenShape.test(decodeComponent(piece))) return piece;
  return eq === -1 ? REDACTED : `${name}=${REDACTED}`;
}

function redactPath(path: string): string {
  return path
    .split('/')
    .map((segment) => (tokenShape.test(decodeComponent(segment)) ? REDACTED : segment))
    .join('/');
}

/**
 * A request URL as it may be logged. Parameters are split on every separator a server or a proxy
 * might honour (`?`, `&`, `;`, `#`), so `?x=1;token=` and `/id;token=` are caught as well as
 * `?token=`; names are compared decoded (`?%74oken=`) and case-insensitively. Anything shaped like
 * one of our tokens is cut wherever it sits, path included.
 */
export function redactUrl(url: string): string {
  const parts = url.split(/([?&;#])/);
  return parts.map((part, i) => (i === 0 ? redactPath(part) : i % 2 === 1 ? part : redactParam(part))).join('');
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  host?: string;
  headers?: Record<string, unknown>;
  socket?: { remoteAddress?: string; remotePort?: number };
  raw?: { method?: string; url?: string; socket?: { remoteAddress?: string; remotePort?: number } };
}

/**
 * pino's `req` serializer. It reads a Fastify request or a bare `IncomingMessage` (the logger
 * may be handed either) and keeps no header: credentials travel in headers.
 */
export function serializeRequest(req: LoggedRequest): Record<string, unknown> {
  const socket = req.socket ?? req.raw?.socket;
  return {
    method: req.method ?? req.raw?.method,
    url: redactUrl(String(req.url ?? req.raw?.url ?? '')),
    host: req.host ?? req.headers?.host,
    remoteAddress: req.ip ?? socket?.remoteAddress,
    remotePort: socket?.remotePort,
  };
}
