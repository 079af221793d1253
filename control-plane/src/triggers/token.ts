import { randomBytes, timingSafeEqual } from 'node:crypto';
import { displayPrefix, hashToken } from '../accounts/tokens.ts';

/** Trigger tokens: `uptt_` and 32 random bytes, so a leaked one is greppable and told apart from API tokens. */
export const TRIGGER_TOKEN_PREFIX = 'uptt_';

export function generateTriggerToken(): { token: string; hash: Buffer; prefix: string } {
  const token = TRIGGER_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), prefix: displayPrefix(token) };
}

/** Compares SHA-256 digests in constant time: how long it takes says nothing about the token. */
export function tokenMatches(presented: string, storedHash: Buffer | null): boolean {
  if (!storedHash) return false;
  const digest = hashToken(presented);
  return digest.length === storedHash.length && timingSafeEqual(digest, storedHash);
}
