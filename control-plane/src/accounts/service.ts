import type { Sql } from '../platform/db/sql.ts';
import { AppError } from '../platform/errors.ts';
import { hashPassword } from './passwords.ts';
import { displayPrefix, generateToken, hashToken, type TokenKind } from './tokens.ts';

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
    const [taken] = await tx`select 1 from users where lower(email) = lower(${email})`;
    if (taken) throw new AppError('CONFLICT', `A user with the email ${email} already exists`);
    const [user] = await tx<{ id: string }[]>`
      insert into users (email, name, password_hash) values (${email}, ${input.name ?? ''}, ${passwordHash})
      returning id`;
    const [org] = await tx<{ id: string }[]>`
      insert into organizations (name) values (${input.organization ?? organizationNameFor(email)}) returning id`;
    await tx`insert into memberships (organization_id, user_id, role) values (${org!.id}, ${user!.id}, 'owner')`;
    const [project] = await tx<{ id: string }[]>`
      insert into projects (organization_id, name) values (${org!.id}, 'Default') returning id`;
    return { user_id: user!.id, organization_id: org!.id, project_id: project!.id };
  });
}

export async function findUserIdByEmail(sql: Sql, email: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email.trim()})`;
  if (!row) throw new AppError('NOT_FOUND', `No user with the email ${email}`);
  return row.id;
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
    if (kind === 'mcp') {
      await tx`update api_tokens set revoked_at = now() where user_id = ${userId} and kind = 'mcp' and revoked_at is null`;
    } else {
      const [dup] = await tx`
        select 1 from api_tokens where user_id = ${userId} and kind = 'api' and name = ${name} and revoked_at is null`;
      if (dup) throw new AppError('CONFLICT', `An active token named "${name}" already exists`);
    }
    const [row] = await tx<{ id: string; created_at: string }[]>`
      insert into api_tokens (user_id, kind, name, token_hash, token_prefix)
      values (${userId}, ${kind}, ${name}, ${hashToken(token)}, ${displayPrefix(token)})
      returning id, created_at`;
    return { id: row!.id, name, kind, token, created_at: row!.created_at };
  });
}

/** Revokes the user's active token of that name; revocation holds from the next request on. */
export async function revokeTokenByName(sql: Sql, userId: string, name: string, kind?: TokenKind): Promise<number> {
  const rows = await sql`
    update api_tokens set revoked_at = now()
    where user_id = ${userId} and name = ${name} and revoked_at is null
      ${kind ? sql`and kind = ${kind}` : sql``}
    returning id`;
  if (rows.length === 0) throw new AppError('NOT_FOUND', `No active token named "${name}"`);
  return rows.length;
}
