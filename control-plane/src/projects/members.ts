import { findUserIdByEmail } from '../accounts/service.ts';
import type { Principal } from '../accounts/bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import { AppError } from '../platform/errors.ts';
import * as repo from './members-repo.ts';

export type { Member } from './members-repo.ts';

/** Members of an organization the principal belongs to (checked by the caller's 403). */
export async function listMembers(sql: Sql, p: Principal, organizationId: string): Promise<repo.Member[]> {
  if (!p.organizationIds.has(organizationId)) throw new AppError('FORBIDDEN');
  return repo.listMembers(sql, organizationId);
}

function requireOwner(p: Principal, organizationId: string): void {
  if (!p.ownedOrganizationIds.has(organizationId)) throw new AppError('FORBIDDEN');
}

/** An owner adds an existing user, by email, as a member. */
export async function addMember(sql: Sql, p: Principal, organizationId: string, email: string): Promise<void> {
  requireOwner(p, organizationId);
  const userId = await findUserIdByEmail(sql, email).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'NOT_FOUND')
      throw new AppError('VALIDATION', `No account uses ${email}. They need to sign up first.`);
    throw err;
  });
  if (!(await repo.insertMember(sql, organizationId, userId))) throw new AppError('CONFLICT', `${email} is already in this organization.`);
}

/** An owner removes a member; owners themselves are not removed this way. */
export async function removeMember(sql: Sql, p: Principal, organizationId: string, userId: string): Promise<void> {
  requireOwner(p, organizationId);
  if (!(await repo.deleteMember(sql, organizationId, userId))) throw new AppError('NOT_FOUND');
}
