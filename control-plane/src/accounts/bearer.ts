import type { FastifyRequest } from 'fastify';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';
import { AppError } from '../platform/errors.ts';
import { findTokenHolder, recordTokenUse } from './tokens-repo.ts';
import { hashToken, type TokenKind } from './tokens.ts';

/** Who is calling, and what they may reach: resolved from the token on every request. */
export interface Principal {
  userId: string;
  tokenId: string;
  organizationIds: ReadonlySet<string>;
  ownedOrganizationIds: ReadonlySet<string>;
  projectIds: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * `Authorization: Bearer <token>` and nothing else: one space, no quotes, nothing before or after
 * the token. The scheme name is case-insensitive (RFC 9110); the token is not.
 */
export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^bearer ([A-Za-z0-9_-]{16,256})$/i.exec(header);
  return m ? m[1]! : null;
}

export interface Authenticator {
  /** The principal of a request, or 401 `{"message":"Unauthorized"}`. */
  authenticate(req: FastifyRequest): Promise<Principal>;
  /** Writes the pending last-used times now (also done on a timer and at stop). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Looks tokens up by SHA-256 on every request (so a revocation holds from the next request on),
 * together with the user's memberships, in one query. `last_used_at` is kept in memory and
 * written in one batched UPDATE every few seconds, so reads never cost a write.
 */
export function createAuthenticator(opts: { sql: Sql; log: Logger; kind: TokenKind; flushMs?: number; now?: () => Date }): Authenticator {
  const { sql, kind } = opts;
  const now = opts.now ?? (() => new Date());
  let pending = new Map<string, Date>();

  const flush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const ids = [...batch.keys()];
    const ats = ids.map((id) => batch.get(id)!.toISOString());
    try {
      await recordTokenUse(sql, ids, ats);
    } catch (err) {
      opts.log.warn({ err }, 'could not record token use; will retry');
      for (const [id, at] of batch) if (!pending.has(id)) pending.set(id, at);
    }
  };
  const timer = setInterval(() => void flush(), opts.flushMs ?? 5_000);
  timer.unref();

  return {
    async authenticate(req) {
      const token = parseBearer(req.headers.authorization);
      if (!token) throw new AppError('UNAUTHORIZED');
      const row = await findTokenHolder(sql, hashToken(token), kind);
      if (!row) throw new AppError('UNAUTHORIZED');
      pending.set(row.id, now());
      return {
        userId: row.user_id,
        tokenId: row.id,
        organizationIds: new Set(row.org_ids),
        ownedOrganizationIds: new Set(row.owned_org_ids),
        projectIds: new Set(row.project_ids),
      };
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}

/** 403 `{"message":"Unauthorized access"}` unless the project is one of the caller's. */
export function requireProject(p: Principal, projectId: string): void {
  if (!p.projectIds.has(projectId)) throw new AppError('FORBIDDEN');
}

export function requireOrganization(p: Principal, organizationId: string): void {
  if (!p.organizationIds.has(organizationId)) throw new AppError('FORBIDDEN');
}

export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new AppError('UNAUTHORIZED');
  return req.principal;
}
