import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeTokenByName, createToken } from '../../control-plane/src/accounts/service.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('bearer authentication', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
  });
  after(() => cp.stop());

  const get = (headers: Record<string, string>) => fetch(`${cp.url}/projects`, { headers });

  it('accepts `Authorization: Bearer <token>`', async () => {
    const res = await get({ authorization: `Bearer ${ada.token}` });
    assert.equal(res.status, 200);
  });

  const rejected: [string, (t: string) => Record<string, string>][] = [
    ['no Authorization header', () => ({})],
    ['another scheme', (t) => ({ authorization: `Basic ${t}` })],
    ['the token alone', (t) => ({ authorization: t })],
    ['a quoted token', (t) => ({ authorization: `Bearer "${t}"` })],
    ['single quotes', (t) => ({ authorization: `Bearer '${t}'` })],
    ['two spaces', (t) => ({ authorization: `Bearer  ${t}` })],
    ['a space inside the token', (t) => ({ authorization: `Bearer ${t.slice(0, 10)} ${t.slice(10)}` })],
    ['a tab for the space', (t) => ({ authorization: `Bearer\t${t}` })],
    ['text after the token', (t) => ({ authorization: `Bearer ${t} extra` })],
    ['text before the token', (t) => ({ authorization: `Bearer x${t}` })],
    ['a truncated token', (t) => ({ authorization: `Bearer ${t.slice(0, -1)}` })],
    ['an unknown token', () => ({ authorization: `Bearer upt_${'A'.repeat(43)}` })],
    ['an empty bearer', () => ({ authorization: 'Bearer ' })],
    ['a token in another header', (t) => ({ 'x-api-key': t })],
  ];
  for (const [name, headers] of rejected) {
    it(`answers 401 Unauthorized for ${name}`, async () => {
      const res = await get(headers(ada.token));
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { message: 'Unauthorized' });
    });
  }

  it('refuses an MCP token on the REST API', async () => {
    const res = await get({ authorization: `Bearer ${ada.mcpToken}` });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { message: 'Unauthorized' });
  });

  it('checks the token before the body, so a bad body without a token is still 401', async () => {
    const res = await fetch(`${cp.url}/monitors`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    assert.equal(res.status, 401);
  });

  it('honours a revocation from the next request on', async () => {
    const extra = await createToken(cp.db.sql, ada.user_id, 'short-lived', 'api');
    assert.equal((await get({ authorization: `Bearer ${extra.token}` })).status, 200);
    await revokeTokenByName(cp.db.sql, ada.user_id, 'short-lived');
    const res = await get({ authorization: `Bearer ${extra.token}` });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { message: 'Unauthorized' });
  });

  it("answers 403 Unauthorized access for an organization that is not the caller's", async () => {
    const bob = await createAccount(cp.db.sql);
    const res = await get({ authorization: `Bearer ${ada.token}` });
    assert.equal(res.status, 200);
    const other = await fetch(`${cp.url}/projects?organization_id=${bob.organization_id}`, { headers: { authorization: ada.auth } });
    assert.equal(other.status, 403);
    assert.deepEqual(await other.json(), { message: 'Unauthorized access' });
  });
});

describe('token last use', () => {
  it('records last_used_at without a write per request, by the time the server stops', async () => {
    const cp = await startTestControlPlane({ roles: ['api'] });
    const ada = await createAccount(cp.db.sql);
    try {
      const before = Date.now();
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${cp.url}/projects`, { headers: { authorization: ada.auth } })).status, 200);
      const [pending] = await cp.db.sql`select last_used_at from api_tokens where name = 'test'`;
      assert.equal(pending!.last_used_at, null, 'not written on the request path');
      await cp.cp.stop();
      const [row] = await cp.db.sql`select last_used_at from api_tokens where name = 'test'`;
      assert.ok(row!.last_used_at, 'written when the batch is flushed');
      assert.ok(Date.parse(row!.last_used_at as string) >= before - 1000);
      const [unused] = await cp.db.sql`select last_used_at from api_tokens where name = 'test-mcp'`;
      assert.equal(unused!.last_used_at, null);
    } finally {
      await cp.nats.close();
      await cp.db.drop();
    }
  });
});
