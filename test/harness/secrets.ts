import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { testEnv } from './env.ts';

/**
 * Secrets the tests create (tokens, passwords, integration credentials, keys) are written to the
 * run's log directory, one per line, so that `test/run.ts` can search every captured log line for
 * them once all files have run. Without a log directory (a file run by hand) this does nothing.
 */
const dir = process.env[testEnv.logDir];
const file = dir ? join(dir, `secrets-${process.pid}.txt`) : undefined;
const seen = new Set<string>();

// Shorter values would match ordinary words in log lines.
const MIN_LENGTH = 8;

export function registerSecret(value: unknown): void {
  if (!file || typeof value !== 'string' || value.length < MIN_LENGTH || value.includes('\n') || seen.has(value)) return;
  seen.add(value);
  appendFileSync(file, `${value}\n`);
}

// The keys the logger treats as secret, plus what integrations keep sealed.
const secretKey = /^(password|.*_password|token|.*_token|secret|.*_secret|routing_key|smtp_url)$/i;
const sealedUrlTypes = new Set(['webhook', 'slack', 'discord', 'teams']);

/**
 * An integration URL as a secret, or undefined when it can carry none: a bare origin
 * (`http://127.0.0.1:40123`, a test receiver's address) has no credential in it, and the same
 * address is printed when another server of the run later listens on that port.
 */
export function urlCredential(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  const bare =
    url.username === '' && url.password === '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.hash === '';
  return bare ? undefined : value;
}

/** Registers every secret an API request or response body carries (by key, as the logger redacts them). */
export function registerSecretsIn(value: unknown, depth = 0): void {
  if (!file || depth > 6 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) registerSecretsIn(v, depth + 1);
    return;
  }
  const obj = value as Record<string, unknown>;
  // An integration's URL holds its credential for these types; its extra headers often do too.
  const config = obj.config as Record<string, unknown> | undefined;
  if (config && typeof config === 'object' && typeof obj.type === 'string' && sealedUrlTypes.has(obj.type)) {
    registerSecret(urlCredential(config.url));
    if (config.headers && typeof config.headers === 'object') for (const v of Object.values(config.headers)) registerSecret(v);
  }
  for (const [k, v] of Object.entries(obj)) {
    if (secretKey.test(k)) registerSecret(v);
    else registerSecretsIn(v, depth + 1);
  }
}
