import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../control-plane/src/accounts/tokens.ts';
import { verifyPassword } from '../../control-plane/src/accounts/passwords.ts';
import { runCli } from '../harness/cli.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('uptime CLI against DATABASE_URL', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, LOG_LEVEL: 'warn' };
  });
  after(() => db.drop());

  it('creates a user who owns an organization with a Default project, and prints their ids as JSON last', async () => {
    const r = await runCli(['user', 'create', '--email', 'ada.lovelace@example.com', '--password', 'analytical-engine'], env);
    assert.equal(r.code, 0, r.stderr);
    const ids = JSON.parse(r.lastLine) as Record<string, string>;
    assert.deepEqual(Object.keys(ids).sort(), ['organization_id', 'project_id', 'user_id']);
    for (const v of Object.values(ids)) assert.match(v, uuid);

    const [row] = await db.sql`
      select u.email, u.password_hash, o.name as org, m.role, p.name as project
      from users u join memberships m on m.user_id = u.id join organizations o on o.id = m.organization_id
      join projects p on p.organization_id = o.id where u.id = ${ids.user_id!}`;
    assert.equal(row!.org, 'Ada Lovelace');
    assert.equal(row!.role, 'owner');
    assert.equal(row!.project, 'Default');
    assert.equal(row!.email, 'ada.lovelace@example.com');
    assert.notEqual(row!.password_hash, 'analytical-engine');
    assert.ok(await verifyPassword('analytical-engine', row!.password_hash as string));
  });

  it('names the organization after --org', async () => {
    const r = await runCli(['user', 'create', '--email', 'grace@example.com', '--password', 'cobol-1959', '--org', 'Navy'], env);
    assert.equal(r.code, 0, r.stderr);
    const { organization_id } = JSON.parse(r.lastLine) as { organization_id: string };
    const [org] = await db.sql`select name from organizations where id = ${organization_id}`;
    assert.equal(org!.name, 'Navy');
  });

  it('refuses a second user with the same email, whatever its case', async () => {
    const r = await runCli(['user', 'create', '--email', 'ADA.LOVELACE@example.com', '--password', 'whatever-123'], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /already exists/);
  });

  it('prints a new token alone on the last line and stores only its SHA-256', async () => {
    const r = await runCli(['token', 'create', '--email', 'ada.lovelace@example.com', '--name', 'deploy'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.lastLine, /^upt_[A-Za-z0-9_-]{43}$/);
    const [row] = await db.sql`select token_hash, kind, name from api_tokens where name = 'deploy'`;
    assert.deepEqual(Buffer.from(row!.token_hash as Uint8Array), hashToken(r.lastLine));
    assert.equal(row!.kind, 'api');
    const leaked =
      await db.sql`select 1 from api_tokens where token_prefix = ${r.lastLine} or encode(token_hash, 'escape') like ${'%' + r.lastLine + '%'}`;
    assert.equal(leaked.length, 0);
  });

  it('creates MCP tokens with their own prefix', async () => {
    const r = await runCli(['token', 'create', '--email', 'ada.lovelace@example.com', '--name', 'assistant', '--mcp'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.lastLine, /^uptm_/);
  });

  it('revokes a token by name', async () => {
    const r = await runCli(['token', 'revoke', '--email', 'ada.lovelace@example.com', '--name', 'deploy'], env);
    assert.equal(r.code, 0, r.stderr);
    const [row] = await db.sql`select revoked_at from api_tokens where name = 'deploy'`;
    assert.notEqual(row!.revoked_at, null);
    const again = await runCli(['token', 'revoke', '--email', 'ada.lovelace@example.com', '--name', 'deploy'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No active token named "deploy"/);
  });

  it('says which user is unknown', async () => {
    const r = await runCli(['token', 'create', '--email', 'nobody@example.com', '--name', 'x'], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No user with the email nobody@example.com/);
  });

  for (const cmd of [
    ['start'],
    ['control-plane'],
    ['probe-agent'],
    ['migrate'],
    ['user', 'create'],
    ['token', 'create'],
    ['token', 'revoke'],
  ]) {
    it(`explains \`${cmd.join(' ')}\` with --help`, async () => {
      const r = await runCli([...cmd, '--help'], env);
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`Usage: uptime ${cmd.join(' ')}`));
    });
  }

  it('rejects an unknown control-plane role by name', async () => {
    const r = await runCli(['control-plane', '--roles', 'api,teleport'], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown role teleport/);
  });

  it('stops with a message naming a bad setting', async () => {
    const r = await runCli(['migrate'], { ...env, PORT: 'abc' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /PORT:/);
  });
});
