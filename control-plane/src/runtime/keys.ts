import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../../../shared/src/config.ts';
import { deriveKey, keyFromText, keyToText } from '../../../shared/src/crypto.ts';
import type { Keys } from '../platform/http/context.ts';

export class MissingSecretKeyError extends Error {
  constructor() {
    super(
      'SECRET_KEY must be set when DATABASE_URL is (the same value on every control-plane process): ' +
        'generate one with `openssl rand -base64 32`.',
    );
    this.name = 'MissingSecretKeyError';
  }
}

/**
 * The master key: SECRET_KEY, or with the embedded default a key generated once into
 * DATA_DIR/secret.key (0600). With an external database a local file would differ between
 * replicas, so SECRET_KEY is then required.
 */
export function masterKey(config: Config): Buffer {
  if (config.SECRET_KEY) return keyFromText(config.SECRET_KEY);
  if (config.DATABASE_URL) throw new MissingSecretKeyError();
  const dir = resolve(config.DATA_DIR);
  const file = join(dir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, keyToText(randomBytes(32)), { mode: 0o600, flag: 'wx' });
  }
  return keyFromText(readFileSync(file, 'utf8').trim());
}

export function deriveKeys(master: Buffer): Keys {
  return {
    checkCredentials: deriveKey(master, 'check-credentials'),
    integrationSecrets: deriveKey(master, 'integration-secrets'),
    alertLinks: deriveKey(master, 'alert-links'),
    subscriberLinks: deriveKey(master, 'subscriber-links'),
    statusPageAccess: deriveKey(master, 'status-page-access'),
  };
}
