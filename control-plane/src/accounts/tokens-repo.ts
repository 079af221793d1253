import type { TokenKind } from './tokens.ts';
import type { Db, Sql } from '../platform/db/sql.ts';
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

export async function hasActiveToken(db: Db, userId: string, kind: TokenKind, name: string): Promise<boolean> {
  const rows = await db`
    select 1 from api_tokens where user_id = ${userId} and kind = ${kind} and name = ${name} and revoked_at is null`;
  return rows.length > 0;
}

export async function revokeActiveTokens(db: Db, userId: string, kind: TokenKind): Promise<void> {
  await db`update api_tokens set revoked_at = now() where user_id = ${userId} and kind = ${kind} and revoked_at is null`;
}

export async function insertToken(
  db: Db,
  t: { userId: string; kind: TokenKind; name: string; hash: Buffer; prefix: string },
): Promise<{ id: string; created_at: string }> {
  const [row] = await db<{ id: string; created_at: string }[]>`
    insert into api_tokens (user_id, kind, name, token_hash, token_prefix)
    values (${t.userId}, ${t.kind}, ${t.name}, ${t.hash}, ${t.prefix})
    returning id, created_at`;
  return row!;
}

/** Revokes the user's active tokens of that name (of one kind, or of both); how many. */
export async function revokeTokensNamed(sql: Sql, userId: string, name: string, kind?: TokenKind): Promise<number> {
  const rows = await sql`
    update api_tokens set revoked_at = now()
    where user_id = ${userId} and name = ${name} and revoked_at is null
      ${kind ? sql`and kind = ${kind}` : sql``}
    returning id`;
  return rows.length;
}

/** Last-used times, each moved forward only. */
export async function recordTokenUse(sql: Sql, ids: readonly string[], ats: readonly string[]): Promise<void> {
  await sql`
    update api_tokens t set last_used_at = greatest(t.last_used_at, v.at)
    from unnest(${sql.array([...ids])}::uuid[], ${sql.array([...ats])}::timestamptz[]) as v(id, at)
    where t.id = v.id`;
}

export interface TokenHolder {
  id: string;
  user_id: string;
  org_ids: string[];
  owned_org_ids: string[];
  project_ids: string[];
}

/** An active token of a kind by its hash, with its user's memberships, in one query. */
export async function findTokenHolder(sql: Sql, hash: Buffer, kind: TokenKind): Promise<TokenHolder | undefined> {
  const [row] = await sql<TokenHolder[]>`
    select t.id, t.user_id,
      coalesce(array_agg(distinct m.organization_id) filter (where m.organization_id is not null), '{}') as org_ids,
      coalesce(array_agg(distinct m.organization_id) filter (where m.role = 'owner'), '{}') as owned_org_ids,
      coalesce(array_agg(distinct p.id) filter (where p.id is not null), '{}') as project_ids
    from api_tokens t
    left join memberships m on m.user_id = t.user_id
    left join projects p on p.organization_id = m.organization_id
    where t.token_hash = ${hash} and t.kind = ${kind} and t.revoked_at is null
    group by t.id`;
  return row;
}
