import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets the service must use later (basic-auth passwords, integration credentials) are sealed
 * with AES-256-GCM. Sealed text: `v1.<iv>.<tag>.<ciphertext>` in base64url. The key is derived
 * per purpose from SECRET_KEY, so a key given to probe agents opens check credentials only.
 */
export type SecretPurpose = 'check-credentials' | 'integration-secrets' | 'alert-links' | 'subscriber-links' | 'status-page-access';

export function deriveKey(masterKey: Buffer, purpose: SecretPurpose): Buffer {
  return createHmac('sha256', masterKey).update(`uptime:${purpose}`).digest();
}

export function seal(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export class SealError extends Error {
  constructor() {
    super('sealed secret could not be opened (wrong key or damaged text)');
    this.name = 'SealError';
  }
}

export function open(sealed: string, key: Buffer): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new SealError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError();
  }
}

/** A 32-byte key from its base64 or base64url text (settings SECRET_KEY and AGENT_KEY). */
export function keyFromText(text: string): Buffer {
  const key = Buffer.from(text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  if (key.length !== 32) throw new Error('a key must be 32 bytes');
  return key;
}

export function keyToText(key: Buffer): string {
  return key.toString('base64url');
}
