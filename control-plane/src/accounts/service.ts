import type { Sql } from '../platform/db/sql.ts';
import { AppError, notFound } from '../platform/errors.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import * as repo from './repo.ts';
import { randomToken } from './sessions.ts';
import * as tokens from './tokens-repo.ts';
import { displayPrefix, generateToken, hashToken, type TokenKind } from './tokens.ts';

export type { TokenRow } from './tokens-repo.ts';

export interface CreatedUser {
  user_id: string;
  organization_id: string;
  project_id: string;
}

/** "ada.lovelace@example.com" -> "Ada Lovelace" */
export function organizationNameFor(email: string): string {
  const local = email.split('@')[0] ?? email;
  const words = local.split(/[._+-]+/).filter(Boolean);
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ');
  return name || email;
}

/**
 * A new account: the user, an organization they own and its `Default` project, in one
 * transaction so a failure leaves nothing half made.
 */
export async function createUser(
  sql: Sql,
  input: { email: string; password: string; organization?: string; name?: string },
): Promise<CreatedUser> {
  const email = input.email.trim();
  const passwordHash = await hashPassword(input.password);
  return sql.begin(async (tx) => {
    if (await repo.emailTaken(tx, email)) throw new AppError('CONFLICT', `A user with the email ${email} already exists`);
    return repo.insertAccount(tx, {
      email,
      name: input.name ?? '',
      passwordHash,
      organization: input.organization ?? organizationNameFor(email),
    });
  });
}

/** How a user is named to the people they work with: their name, else their email. */
export async function userDisplayName(sql: Sql, userId: string): Promise<string> {
  return (await repo.userName(sql, userId)) ?? 'a user';
}

export async function findUserIdByEmail(sql: Sql, email: string): Promise<string> {
  const user = await repo.findUser(sql, email.trim());
  if (!user) throw new AppError('NOT_FOUND', `No user with the email ${email}`);
  return user.id;
}

// Checked against when the email is unknown, so a wrong email costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;

/** The id of the user with this email and password; null for a wrong email or password alike. */
export async function checkPassword(sql: Sql, email: string, password: string): Promise<string | null> {
  const user = await repo.findUser(sql, email);
  dummyHash ??= hashPassword(randomToken());
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash));
  return user && ok ? user.id : null;
}

export interface CreatedToken {
  id: string;
  name: string;
  kind: TokenKind;
  token: string;
  created_at: string;
}

/**
 * A new token, returned once in full; only its SHA-256 is stored. A user has at most one MCP
 * token: creating another revokes the previous one (rotation).
 */
export async function createToken(sql: Sql, userId: string, name: string, kind: TokenKind): Promise<CreatedToken> {
  const token = generateToken(kind);
  return sql.begin(async (tx) => {
    if (kind === 'mcp') await tokens.revokeActiveTokens(tx, userId, 'mcp');
    else if (await tokens.hasActiveToken(tx, userId, 'api', name))
      throw new AppError('CONFLICT', `An active token named "${name}" already exists`);
    const row = await tokens.insertToken(tx, { userId, kind, name, hash: hashToken(token), prefix: displayPrefix(token) });
    return { id: row.id, name, kind, token, created_at: row.created_at };
  });
}

/** The user's active tokens of a kind, oldest first: names and prefixes, never the tokens. */
export async function listTokens(sql: Sql, userId: string, kind: TokenKind): Promise<tokens.TokenRow[]> {
  return tokens.activeTokens(sql, userId, kind);
}

/** Revokes the user's active token of that name; revocation holds from the next request on. */
export async function revokeTokenByName(sql: Sql, userId: string, name: string, kind?: TokenKind): Promise<number> {
  const revoked = await tokens.revokeTokensNamed(sql, userId, name, kind);
  if (revoked === 0) throw new AppError('NOT_FOUND', `No active token named "${name}"`);
  return revoked;
}

/** Revokes one of the user's active tokens by id; its name, or 404 when the user has no such token. */
export async function revokeToken(sql: Sql, userId: string, id: string, kind: TokenKind): Promise<string> {
  const name = await tokens.activeTokenName(sql, userId, id, kind);
  if (!name) throw notFound();
  await revokeTokenByName(sql, userId, name, kind);
  return name;
}

/** Revokes the user's MCP token; false when there was none. */
export async function revokeMcpToken(sql: Sql, userId: string): Promise<boolean> {
  const [current] = await tokens.activeTokens(sql, userId, 'mcp');
  if (current) await revokeTokenByName(sql, userId, current.name, 'mcp');
  return current !== undefined;
}
