import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const uuid = /^[0-9a-f-]{36}$/;

describe('triggers API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  const valid = () => ({ project_id: ada.project_id, name: 'Deploys', default_message: 'A deploy finished' });
  const integration = async (account: TestAccount, name = 'hook') =>
    (
      await apiClient(cp.url, account.token)('POST', '/integrations', {
        project_id: account.project_id,
        name,
        type: 'ntfy',
        config: { topic: 'x' },
      })
    ).body.data.id as string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { TRIGGER_BASE_URL: 'https://notify.example.com/' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  describe('create', () => {
    it('creates a trigger with the documented defaults, its URL and the create envelope', async () => {
      const res = await api('POST', '/triggers', valid());
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.message, 'Trigger created successfully');
      const t = res.body.data;
      assert.match(t.id, uuid);
      assert.equal(t.project_id, ada.project_id);
      assert.equal(t.name, 'Deploys');
      assert.equal(t.default_message, 'A deploy finished');
      assert.deepEqual(t.integration_ids, []);
      assert.equal(t.token_protected, false);
      assert.equal(t.token_hint, null);
      assert.equal('token' in t, false);
      assert.equal(t.rate_limit, null);
      assert.equal(t.active, true);
      assert.equal(t.url, `https://notify.example.com/api/notify/${t.id}`);
      assert.equal(t.fire_count, 0);
      assert.equal(t.last_fired_at, null);
      assert.match(t.created_at, timestampFormat);
      assert.match(t.updated_at, timestampFormat);
      assert.deepEqual(t.project, { id: ada.project_id, name: 'Default', description: '' });
    });

    it('shows the token of a protected trigger once, in the create answer, and keeps only its hash', async () => {
      const res = await api('POST', '/triggers', { ...valid(), token_protected: true });
      const t = res.body.data;
      assert.match(t.token, /^uptt_[A-Za-z0-9_-]{43}$/);
      assert.equal(t.token_hint, `${t.token.slice(0, 11)}…`);
      const [row] = await cp.db.sql<{ token_hash: Buffer }[]>`select token_hash from triggers where id = ${t.id}`;
      assert.deepEqual(row!.token_hash, createHash('sha256').update(t.token).digest());
      const read = await api('GET', `/triggers/${t.id}`);
      assert.equal('token' in read.body.data, false);
      assert.ok(!JSON.stringify(read.body).includes(t.token));
      const list = await api('GET', '/triggers');
      assert.ok(!JSON.stringify(list.body).includes(t.token));
    });

    it('links integrations of the same project and refuses others with 422 on integration_ids.N', async () => {
      const mine = await integration(ada);
      const bob = await createAccount(cp.db.sql);
      const theirs = await integration(bob);
      const ok = await api('POST', '/triggers', { ...valid(), integration_ids: [mine] });
      assert.deepEqual(ok.body.data.integration_ids, [mine]);
      assertInvalid(await api('POST', '/triggers', { ...valid(), integration_ids: [mine, theirs] }), ['integration_ids.1']);
      assertInvalid(await api('POST', '/triggers', { ...valid(), integration_ids: ['00000000-0000-4000-8000-000000000000'] }), [
        'integration_ids.0',
      ]);
      assertInvalid(await api('POST', '/triggers', { ...valid(), integration_ids: ['nope'] }), ['integration_ids.0']);
    });

    it('requires project_id, name and default_message', async () => {
      assertInvalid(await api('POST', '/triggers', {}), ['project_id', 'name', 'default_message']);
    });

    const edges: [string, Record<string, unknown>, boolean, string[]?][] = [
      ['name of 255 characters', { name: 'n'.repeat(255) }, true],
      ['name of 256 characters', { name: 'n'.repeat(256) }, false],
      ['a blank name', { name: '   ' }, false],
      ['default_message of 4000 characters', { default_message: 'm'.repeat(4000) }, true],
      ['default_message of 4001 characters', { default_message: 'm'.repeat(4001) }, false],
      ['an empty default_message', { default_message: '' }, false],
      ['a rate limit of 1 per second', { rate_limit: { max: 1, per: 'second' } }, true],
      ['a rate limit per day', { rate_limit: { max: 1000, per: 'day' } }, true],
      ['a null rate limit', { rate_limit: null }, true],
      ['a rate limit of 0', { rate_limit: { max: 0, per: 'minute' } }, false, ['rate_limit.max']],
      ['a fractional rate limit', { rate_limit: { max: 1.5, per: 'minute' } }, false, ['rate_limit.max']],
      ['a rate limit per week', { rate_limit: { max: 1, per: 'week' } }, false, ['rate_limit.per']],
      ['a rate limit without per', { rate_limit: { max: 1 } }, false, ['rate_limit.per']],
      ['token_protected as a string', { token_protected: 'yes' }, false],
      ['active as a number', { active: 1 }, false],
    ];
    for (const [name, patch, ok, fields] of edges) {
      it(`${ok ? 'accepts' : 'refuses'} ${name}`, async () => {
        const res = await api('POST', '/triggers', { ...valid(), ...patch });
        if (ok) assert.equal(res.status, 201, JSON.stringify(res.body));
        else assertInvalid(res, fields ?? Object.keys(patch));
      });
    }
  });

  describe('update', () => {
    it('changes the fields sent, keeps the others, ignores project_id and answers with the update envelope', async () => {
      const created = (await api('POST', '/triggers', { ...valid(), rate_limit: { max: 5, per: 'minute' } })).body.data;
      const bob = await createAccount(cp.db.sql);
      const res = await api('PATCH', `/triggers/${created.id}`, { name: 'Renamed', active: false, project_id: bob.project_id });
      assert.equal(res.status, 200);
      assert.equal(res.body.message, 'Trigger updated successfully');
      assert.equal(res.body.data.name, 'Renamed');
      assert.equal(res.body.data.active, false);
      assert.equal(res.body.data.default_message, 'A deploy finished');
      assert.deepEqual(res.body.data.rate_limit, { max: 5, per: 'minute' });
      assert.equal(res.body.data.project_id, ada.project_id);
      const cleared = await api('PATCH', `/triggers/${created.id}`, { rate_limit: null });
      assert.equal(cleared.body.data.rate_limit, null);
    });

    it('replaces the linked integrations, [] empties them', async () => {
      const [a, b] = [await integration(ada, 'a'), await integration(ada, 'b')];
      const created = (await api('POST', '/triggers', { ...valid(), integration_ids: [a] })).body.data;
      const res = await api('PATCH', `/triggers/${created.id}`, { integration_ids: [b, a] });
      assert.deepEqual(res.body.data.integration_ids, [a, b].sort());
      assert.deepEqual((await api('PATCH', `/triggers/${created.id}`, { integration_ids: [] })).body.data.integration_ids, []);
      const bob = await createAccount(cp.db.sql);
      assertInvalid(await api('PATCH', `/triggers/${created.id}`, { integration_ids: [await integration(bob)] }), ['integration_ids.0']);
    });

    it('never shows a token in an update, even when protection is turned on', async () => {
      const created = (await api('POST', '/triggers', valid())).body.data;
      const res = await api('PATCH', `/triggers/${created.id}`, { token_protected: true });
      assert.equal(res.body.data.token_protected, true);
      assert.equal(res.body.data.token_hint, null);
      assert.equal('token' in res.body.data, false);
    });

    it('applies the same bounds as create', async () => {
      const created = (await api('POST', '/triggers', valid())).body.data;
      assertInvalid(await api('PATCH', `/triggers/${created.id}`, { name: 'n'.repeat(256) }), ['name']);
      assertInvalid(await api('PATCH', `/triggers/${created.id}`, { default_message: 'm'.repeat(4001) }), ['default_message']);
      assertInvalid(await api('PATCH', `/triggers/${created.id}`, { rate_limit: { max: 0, per: 'hour' } }), ['rate_limit.max']);
    });
  });

  describe('token', () => {
    it('generates a new token shown once; the old one stops matching', async () => {
      const created = (await api('POST', '/triggers', { ...valid(), token_protected: true })).body.data;
      const res = await api('POST', `/triggers/${created.id}/token`);
      assert.equal(res.status, 200);
      assert.equal(typeof res.body.message, 'string');
      assert.match(res.body.data.token, /^uptt_/);
      assert.notEqual(res.body.data.token, created.token);
      assert.equal(res.body.data.id, created.id);
      const [row] = await cp.db.sql<{ token_hash: Buffer }[]>`select token_hash from triggers where id = ${created.id}`;
      assert.deepEqual(row!.token_hash, createHash('sha256').update(res.body.data.token).digest());
      assert.equal('token' in (await api('GET', `/triggers/${created.id}`)).body.data, false);
    });
  });

  describe('reads and tenancy', () => {
    let bob: TestAccount;
    let bobs: string;
    before(async () => {
      bob = await createAccount(cp.db.sql);
      bobs = (await apiClient(cp.url, bob.token)('POST', '/triggers', { project_id: bob.project_id, name: 'b', default_message: 'b' })).body
        .data.id;
    });

    it('answers 401 without a valid token', async () => {
      assert.deepEqual((await apiClient(cp.url)('GET', '/triggers')).body, { message: 'Unauthorized' });
      assert.equal((await apiClient(cp.url, 'upt_nope')('POST', '/triggers', valid())).status, 401);
    });

    it("answers 403 for another tenant's project_id", async () => {
      assert.deepEqual((await api('GET', `/triggers?project_id=${bob.project_id}`)).body, { message: 'Unauthorized access' });
      assert.equal((await api('POST', '/triggers', { ...valid(), project_id: bob.project_id })).status, 403);
      assert.equal((await api('POST', '/triggers', { ...valid(), project_id: '00000000-0000-4000-8000-000000000000' })).status, 403);
    });

    it("answers 404 for another tenant's trigger, an unknown or a malformed id on every route", async () => {
      for (const id of [bobs, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        for (const [method, path, body] of [
          ['GET', `/triggers/${id}`],
          ['PATCH', `/triggers/${id}`, { name: 'mine' }],
          ['DELETE', `/triggers/${id}`],
          ['POST', `/triggers/${id}/token`],
          ['GET', `/triggers/${id}/events`],
        ] as const) {
          const res = await api(method, path, body);
          assert.equal(res.status, 404, `${method} ${path}`);
          assert.deepEqual(res.body, { message: 'Not found' });
        }
      }
    });

    it('deletes with 204, after which the trigger is gone', async () => {
      const created = (await api('POST', '/triggers', valid())).body.data;
      assert.equal((await api('DELETE', `/triggers/${created.id}`)).status, 204);
      assert.equal((await api('GET', `/triggers/${created.id}`)).status, 404);
    });

    it("lists the caller's triggers 25 a page, oldest first, with the list meta", async () => {
      const carl = await createAccount(cp.db.sql);
      const carlApi = apiClient(cp.url, carl.token);
      const second = (await carlApi('POST', '/projects', { name: 'Second' })).body.data.id;
      for (let i = 0; i < 26; i++) await carlApi('POST', '/triggers', { project_id: carl.project_id, name: `t${i}`, default_message: 'm' });
      await carlApi('POST', '/triggers', { project_id: second, name: 's0', default_message: 'm' });
      const all = await carlApi('GET', '/triggers');
      assert.deepEqual(all.body.meta, { current_page: 1, per_page: 25, total: 27, last_page: 2 });
      assert.equal(all.body.data[0].name, 't0');
      const p2 = await carlApi('GET', `/triggers?project_id=${carl.project_id}&page=2`);
      assert.deepEqual(
        p2.body.data.map((t: { name: string }) => t.name),
        ['t25'],
      );
      const other = await carlApi('GET', `/triggers?project_id=${second}`);
      assert.deepEqual(
        other.body.data.map((t: { name: string }) => t.name),
        ['s0'],
      );
      assertInvalid(await carlApi('GET', '/triggers?page=abc'), ['page']);
    });
  });
});
