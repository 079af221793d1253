import type { Db } from '../platform/db/sql.ts';

/** Users and what a new account is made of. Emails are compared without case. */

export async function emailTaken(db: Db, email: string): Promise<boolean> {
  const rows = await db`select 1 from users where lower(email) = lower(${email})`;
  return rows.length > 0;
}

export async function findUser(db: Db, email: string): Promise<{ id: string; password_hash: string } | undefined> {
  const [row] = await db<{ id: string; password_hash: string }[]>`
    select id, password_hash from users where lower(email) = lower(${email})`;
  return row;
}

/**
 * The rows of a new account: the user, an organization they own and its `Default` project (run
 * inside the caller's transaction, so a failure leaves nothing half made).
 */
export async function insertAccount(
  tx: Db,
  a: { email: string; name: string; passwordHash: string; organization: string },
): Promise<{ user_id: string; organization_id: string; project_id: string }> {
  const [user] = await tx<{ id: string }[]>`
    insert into users (email, name, password_hash) values (${a.email}, ${a.name}, ${a.passwordHash})
    returning id`;
  const [org] = await tx<{ id: string }[]>`
    insert into organizations (name) values (${a.organization}) returning id`;
  await tx`insert into memberships (organization_id, user_id, role) values (${org!.id}, ${user!.id}, 'owner')`;
  const [project] = await tx<{ id: string }[]>`
    insert into projects (organization_id, name) values (${org!.id}, 'Default') returning id`;
  return { user_id: user!.id, organization_id: org!.id, project_id: project!.id };
}

/** A user's name, else their email; undefined when there is no such user. */
export async function userName(db: Db, id: string): Promise<string | undefined> {
  const [u] = await db<{ name: string; email: string }[]>`select name, email from users where id = ${id}`;
  return u ? u.name.trim() || u.email : undefined;
}
