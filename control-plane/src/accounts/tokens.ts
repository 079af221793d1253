import { createHash, randomBytes } from 'node:crypto';

export type TokenKind = 'api' | 'mcp';

/**
 * Tokens carry a prefix naming their kind, so a leaked one is easy to grep for and to tell
 * apart: `upt_` opens the REST API, `uptm_` the MCP endpoint.
 */
export const tokenPrefixes: Record<TokenKind, string> = { api: 'upt_', mcp: 'uptm_' };

/** 32 random bytes: far beyond guessing, so one SHA-256 (no salt, no stretching) is enough to store. */
export function generateToken(kind: TokenKind): string {
  return tokenPrefixes[kind] + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** What the dashboard may show of a token after creation: its prefix and first characters. */
export function displayPrefix(token: string): string {
  return token.slice(0, token.indexOf('_') + 7);
}
