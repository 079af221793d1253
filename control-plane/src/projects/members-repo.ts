import type { Sql } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';

export interface Member {
  user_id: string;
  email: string;
  name: string;
  role: 'owner' | 'member';
  joined_at: string;
}

/** Owners first, then by when they joined. */
export async function listMembers(sql: Sql, organizationId: string): Promise<Member[]> {
  const rows = await sql<Member[]>`
    select u.id as user_id, u.email, u.name, m.role, m.created_at as joined_at
    from memberships m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId}
    order by m.role desc, m.created_at, u.email`;
  return rows.map((r) => ({ ...r, joined_at: formatTimestamp(r.joined_at) }));
}

/** False when the user was a member already. */
export async function insertMember(sql: Sql, organizationId: string, userId: string): Promise<boolean> {
  const rows = await sql`
    insert into memberships (organization_id, user_id, role) values (${organizationId}, ${userId}, 'member')
    on conflict do nothing returning user_id`;
  return rows.length > 0;
}

/** Removes a member (never an owner); false when there was no such member. */
export async function deleteMember(sql: Sql, organizationId: string, userId: string): Promise<boolean> {
  const rows = await sql`
    delete from memberships where organization_id = ${organizationId} and user_id = ${userId} and role = 'member' returning user_id`;
  return rows.length > 0;
}
