import { createHash } from 'node:crypto';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { createSession, destroySession } from '../../control-plane/src/accounts/sessions.ts';
import { registerSecret } from './secrets.ts';

export interface TestSession {
  token: string;
  /** The synchronizer token every signed-in form carries. */
  csrf: string;
  /** A Cookie header value holding the session (the http cookie name: PUBLIC_URL is http in tests). */
  cookie: string;
}

/**
 * A dashboard session opened the way sign-in opens one, without the password round trip (and so
 * without the sign-in throttle). `startedAt` in the past gives a session that has already expired.
 */
export async function openSession(sql: Sql, userId: string, opts: { ttlHours?: number; startedAt?: Date } = {}): Promise<TestSession> {
  const { token } = await createSession(sql, {
    userId,
    userAgent: 'test',
    ip: '127.0.0.1',
    ttlHours: opts.ttlHours ?? 336,
    now: opts.startedAt ?? new Date(),
  });
  registerSecret(token);
  const hash = createHash('sha256').update(token, 'utf8').digest();
  const [row] = await sql<{ csrf_token: string }[]>`select csrf_token from web_sessions where token_hash = ${hash}`;
  return { token, csrf: row!.csrf_token, cookie: `uptime_session=${token}` };
}

/** A session that existed and was signed out: its cookie names nothing any more. */
export async function signedOutSession(sql: Sql, userId: string): Promise<TestSession> {
  const s = await openSession(sql, userId);
  await destroySession(sql, s.token);
  return s;
}
