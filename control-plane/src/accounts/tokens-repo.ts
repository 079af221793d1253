import type { TokenKind } from './tokens.ts';
import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';

export interface TokenRow {
  id: string;
  name: string;
  token_prefix: string;
  created_at: string;
  last_used_at: string | null;
}

/** The user's active tokens of a kind, oldest first. Never the token itself: only its prefix. */
export async function activeTokens(sql: Sql, userId: string, kind: TokenKind): Promise<TokenRow[]> {
  const rows = await sql<TokenRow[]>`
    select id, name, token_prefix, created_at, last_used_at from api_tokens
    where user_id = ${userId} and kind = ${kind} and revoked_at is null
    order by created_at, id`;
  return rows.map((r) => ({ ...r, created_at: formatTimestamp(r.created_at), last_used_at: formatTimestamp(r.last_used_at) }));
}

export async function activeTokenName(sql: Sql, userId: string, id: string, kind: TokenKind): Promise<string | undefined> {
  const [row] = await sql<{ name: string }[]>`
    select name from api_tokens where id = ${id} and user_id = ${userId} and kind = ${kind} and revoked_at is null`;
  return row?.name;
}
