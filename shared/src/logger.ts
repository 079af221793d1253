import { pino, type Logger, type DestinationStream } from 'pino';
import { prettyDestination } from './log-pretty.ts';
import { serializeRequest } from './request-log.ts';

export type { Logger };

/** Header paths pino replaces with "[redacted]" (request and response logs). */
export const redactPaths = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]'];

/**
 * Keys whose values are secrets at any depth of a log object: tokens, passwords, integration
 * credentials, URLs that embed them. They must never reach a log.
 */
const secretKey =
  /^(password|.*_password|token|.*_token|secret|.*_secret|routing_key|authorization|cookie|api_key|smtp_url|webhook_url|password_sealed|.*_sealed)$/i;

export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  // Only plain objects are copied: requests, replies and errors keep their prototypes, so pino's
  // serializers still see them (their secret headers are covered by redactPaths).
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = secretKey.test(k) && v != null ? '[redacted]' : redactSecrets(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  level: string;
  /** Defaults to stdout; CLI commands whose stdout is machine-read log to stderr. */
  destination?: DestinationStream | NodeJS.WritableStream;
  base?: Record<string, unknown>;
  /** Readable lines instead of JSON; by default when the destination is a terminal's stdout or stderr. */
  pretty?: boolean;
}

/** A terminal gets readable lines; a pipe, a file or a container's log collector gets JSON. */
function isTerminal(stream: unknown): stream is NodeJS.WriteStream {
  return (stream === process.stdout || stream === process.stderr) && (stream as NodeJS.WriteStream).isTTY === true;
}

export function createLogger(opts: LoggerOptions): Logger {
  const destination = opts.destination ?? process.stdout;
  const pretty = opts.pretty ?? isTerminal(destination);
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid, ...opts.base },
      redact: { paths: redactPaths, censor: '[redacted]' },
      // Every server's request lines go through this one serializer (Fastify takes the logger's over its own).
      serializers: { req: serializeRequest },
      formatters: { log: (obj) => redactSecrets(obj) as Record<string, unknown> },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    (pretty
      ? prettyDestination(destination as NodeJS.WritableStream, isTerminal(destination) && !process.env.NO_COLOR)
      : destination) as DestinationStream,
  );
}
