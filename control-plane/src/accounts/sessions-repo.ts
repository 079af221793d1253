import type { Sql } from '../platform/db/sql.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  email: string;
  name: string;
  csrf_token: string;
  project_id: string | null;
  flash: string | null;
  last_seen_at: string;
  org_ids: string[];
  owned_org_ids: string[];
  project_ids: string[];
}

export async function insertSession(
  sql: Sql,
  s: { userId: string; tokenHash: Buffer; csrfToken: string; userAgent: string | null; ip: string; now: Date; expiresAt: Date },
): Promise<void> {
  await sql`
    insert into web_sessions (user_id, token_hash, csrf_token, user_agent, ip, created_at, last_seen_at, expires_at)
    values (${s.userId}, ${s.tokenHash}, ${s.csrfToken}, ${s.userAgent}, ${s.ip}, ${s.now}, ${s.now}, ${s.expiresAt})`;
}

/** The unexpired session of a token hash, with its user and the user's memberships. */
export async function findSession(sql: Sql, tokenHash: Buffer, now: Date): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select s.id, s.user_id, u.email, u.name, s.csrf_token, s.project_id, s.flash, s.last_seen_at,
      coalesce(array_agg(distinct m.organization_id) filter (where m.organization_id is not null), '{}') as org_ids,
      coalesce(array_agg(distinct m.organization_id) filter (where m.role = 'owner'), '{}') as owned_org_ids,
      coalesce(array_agg(distinct p.id) filter (where p.id is not null), '{}') as project_ids
    from web_sessions s
    join users u on u.id = s.user_id
    left join memberships m on m.user_id = s.user_id
    left join projects p on p.organization_id = m.organization_id
    where s.token_hash = ${tokenHash} and s.expires_at > ${now}
    group by s.id, u.id`;
  return row;
}

export async function extendSession(sql: Sql, id: string, seenAt: Date, expiresAt: Date): Promise<void> {
  await sql`update web_sessions set last_seen_at = ${seenAt}, expires_at = ${expiresAt} where id = ${id}`;
}

export async function deleteSession(sql: Sql, tokenHash: Buffer): Promise<void> {
  await sql`delete from web_sessions where token_hash = ${tokenHash}`;
}

export async function updateFlash(sql: Sql, id: string, text: string | null): Promise<void> {
  await sql`update web_sessions set flash = ${text} where id = ${id}`;
}

export async function updateProject(sql: Sql, id: string, projectId: string): Promise<void> {
  await sql`update web_sessions set project_id = ${projectId} where id = ${id}`;
}

/** Deletes the sessions expired at `now`; how many. */
export async function deleteExpiredSessions(sql: Sql, now: Date): Promise<number> {
  const rows = await sql`delete from web_sessions where expires_at <= ${now} returning id`;
  return rows.length;
}
