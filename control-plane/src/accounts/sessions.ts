import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from './bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import * as repo from './sessions-repo.ts';

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
  await repo.insertSession(sql, {
    userId: opts.userId,
    tokenHash: hash(token),
    csrfToken: randomToken(),
    userAgent: opts.userAgent?.slice(0, 500) ?? null,
    ip: opts.ip,
    now: opts.now,
    expiresAt,
  });
  return { token, expiresAt };
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
  const row = await repo.findSession(sql, hash(token), opts.now);
  if (!row) return undefined;
  let extendedUntil: Date | null = null;
  if (opts.now.getTime() - new Date(formatTimestamp(row.last_seen_at)).getTime() >= SLIDE_EVERY_MS) {
    extendedUntil = new Date(opts.now.getTime() + opts.ttlHours * 3_600_000);
    await repo.extendSession(sql, row.id, opts.now, extendedUntil);
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
  await repo.deleteSession(sql, hash(token));
}

export async function setFlash(sql: Sql, sessionId: string, text: string | null): Promise<void> {
  await repo.updateFlash(sql, sessionId, text);
}

export async function setCurrentProject(sql: Sql, sessionId: string, projectId: string): Promise<void> {
  await repo.updateProject(sql, sessionId, projectId);
}

/** Expired sessions are useless; removed now and then so the table does not grow forever. */
export async function purgeExpiredSessions(sql: Sql, now: Date): Promise<number> {
  return repo.deleteExpiredSessions(sql, now);
}
