import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from './bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';

/** A signed-in visitor: their session row, who they are and what they may reach. */
export interface WebSession {
  id: string;
  userId: string;
  email: string;
  name: string;
  csrfToken: string;
  projectId: string | null;
  flash: string | null;
  principal: Principal;
}

export const randomToken = () => randomBytes(32).toString('base64url');
const hash = (token: string) => createHash('sha256').update(token, 'utf8').digest();

// A session is extended at most once a minute: every page view must not cost a write.
const SLIDE_EVERY_MS = 60_000;

export interface CreatedSession {
  token: string;
  expiresAt: Date;
}

export async function createSession(
  sql: Sql,
  opts: { userId: string; userAgent: string | undefined; ip: string; ttlHours: number; now: Date },
): Promise<CreatedSession> {
  const token = randomToken();
  const expiresAt = new Date(opts.now.getTime() + opts.ttlHours * 3_600_000);
  await sql`
    insert into web_sessions (user_id, token_hash, csrf_token, user_agent, ip, created_at, last_seen_at, expires_at)
    values (${opts.userId}, ${hash(token)}, ${randomToken()}, ${opts.userAgent?.slice(0, 500) ?? null}, ${opts.ip},
      ${opts.now}, ${opts.now}, ${expiresAt})`;
  return { token, expiresAt };
}

interface SessionRow {
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

/**
 * The session of a cookie, with the user's memberships read fresh (a removed member loses
 * access on their next request). Returns the new expiry when the session was extended, so the
 * cookie can follow.
 */
export async function loadSession(
  sql: Sql,
  token: string,
  opts: { now: Date; ttlHours: number },
): Promise<{ session: WebSession; extendedUntil: Date | null } | undefined> {
  const [row] = await sql<SessionRow[]>`
    select s.id, s.user_id, u.email, u.name, s.csrf_token, s.project_id, s.flash, s.last_seen_at,
      coalesce(array_agg(distinct m.organization_id) filter (where m.organization_id is not null), '{}') as org_ids,
      coalesce(array_agg(distinct m.organization_id) filter (where m.role = 'owner'), '{}') as owned_org_ids,
      coalesce(array_agg(distinct p.id) filter (where p.id is not null), '{}') as project_ids
    from web_sessions s
    join users u on u.id = s.user_id
    left join memberships m on m.user_id = s.user_id
    left join projects p on p.organization_id = m.organization_id
    where s.token_hash = ${hash(token)} and s.expires_at > ${opts.now}
    group by s.id, u.id`;
  if (!row) return undefined;
  let extendedUntil: Date | null = null;
  if (opts.now.getTime() - new Date(formatTimestamp(row.last_seen_at)).getTime() >= SLIDE_EVERY_MS) {
    extendedUntil = new Date(opts.now.getTime() + opts.ttlHours * 3_600_000);
    await sql`update web_sessions set last_seen_at = ${opts.now}, expires_at = ${extendedUntil} where id = ${row.id}`;
  }
  return {
    extendedUntil,
    session: {
      id: row.id,
      userId: row.user_id,
      email: row.email,
      name: row.name,
      csrfToken: row.csrf_token,
      projectId: row.project_id,
      flash: row.flash,
      principal: {
        userId: row.user_id,
        tokenId: row.id,
        organizationIds: new Set(row.org_ids),
        ownedOrganizationIds: new Set(row.owned_org_ids),
        projectIds: new Set(row.project_ids),
      },
    },
  };
}

export async function destroySession(sql: Sql, token: string): Promise<void> {
  await sql`delete from web_sessions where token_hash = ${hash(token)}`;
}

export async function setFlash(sql: Sql, sessionId: string, text: string | null): Promise<void> {
  await sql`update web_sessions set flash = ${text} where id = ${sessionId}`;
}

export async function setCurrentProject(sql: Sql, sessionId: string, projectId: string): Promise<void> {
  await sql`update web_sessions set project_id = ${projectId} where id = ${sessionId}`;
}

/** Expired sessions are useless; removed now and then so the table does not grow forever. */
export async function purgeExpiredSessions(sql: Sql, now: Date): Promise<number> {
  const rows = await sql`delete from web_sessions where expires_at <= ${now} returning id`;
  return rows.length;
}
