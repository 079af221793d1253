import { findUserIdByEmail } from '../accounts/service.ts';
import type { Principal } from '../accounts/bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import { AppError } from '../platform/errors.ts';
import { formatTimestamp } from '../platform/http/time.ts';

export interface Member {
  user_id: string;
  email: string;
  name: string;
  role: 'owner' | 'member';
  joined_at: string;
}

/** Members of an organization the principal belongs to (checked by the caller's 403). */
export async function listMembers(sql: Sql, p: Principal, organizationId: string): Promise<Member[]> {
  if (!p.organizationIds.has(organizationId)) throw new AppError('FORBIDDEN');
  const rows = await sql<Member[]>`
    select u.id as user_id, u.email, u.name, m.role, m.created_at as joined_at
    from memberships m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId}
    order by m.role desc, m.created_at, u.email`;
  return rows.map((r) => ({ ...r, joined_at: formatTimestamp(r.joined_at) }));
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
  const rows = await sql`
    insert into memberships (organization_id, user_id, role) values (${organizationId}, ${userId}, 'member')
    on conflict do nothing returning user_id`;
  if (rows.length === 0) throw new AppError('CONFLICT', `${email} is already in this organization.`);
}

/** An owner removes a member; owners themselves are not removed this way. */
export async function removeMember(sql: Sql, p: Principal, organizationId: string, userId: string): Promise<void> {
  requireOwner(p, organizationId);
  const rows = await sql`
    delete from memberships where organization_id = ${organizationId} and user_id = ${userId} and role = 'member' returning user_id`;
  if (rows.length === 0) throw new AppError('NOT_FOUND');
}
