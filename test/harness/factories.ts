import { randomBytes } from 'node:crypto';
import { createToken, createUser, type CreatedUser } from '../../control-plane/src/accounts/service.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { registerSecret } from './secrets.ts';

export interface TestAccount extends CreatedUser {
  email: string;
  password: string;
  token: string;
  mcpToken: string;
  /** Authorization header value for the REST API. */
  auth: string;
}

/** A user with an organization, its Default project, an API token and an MCP token. */
export async function createAccount(sql: Sql, overrides: { email?: string; password?: string } = {}): Promise<TestAccount> {
  const email = overrides.email ?? `user-${randomBytes(4).toString('hex')}@example.test`;
  const password = overrides.password ?? 'correct horse battery';
  const user = await createUser(sql, { email, password });
  const api = await createToken(sql, user.user_id, 'test', 'api');
  const mcp = await createToken(sql, user.user_id, 'test-mcp', 'mcp');
  for (const secret of [password, api.token, mcp.token]) registerSecret(secret);
  return { ...user, email, password, token: api.token, mcpToken: mcp.token, auth: `Bearer ${api.token}` };
}
