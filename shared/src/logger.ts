import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Paths pino replaces with "[redacted]" wherever they appear in a log line.
 * Tokens, passwords and integration secrets must never reach a log.
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'password',
  'token',
  'secret',
  'basic_auth_password',
  '*.password',
  '*.token',
  '*.secret',
  '*.basic_auth_password',
  '*.routing_key',
  '*.bot_token',
  'config.secret',
  'config.token',
  'config.bot_token',
  'config.routing_key',
  'config.password',
];

export interface LoggerOptions {
  level: string;
  /** Defaults to stdout; CLI commands whose stdout is machine-read log to stderr. */
  destination?: DestinationStream | NodeJS.WritableStream;
  base?: Record<string, unknown>;
}

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid, ...opts.base },
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    (opts.destination ?? process.stdout) as DestinationStream,
  );
}
