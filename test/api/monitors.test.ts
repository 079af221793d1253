import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { open } from '../../shared/src/crypto.ts';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const uuid = /^[0-9a-f-]{36}$/;

describe('monitors API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  const valid = () => ({ name: 'Home page', url: 'https://example.com/', project_id: ada.project_id });

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  describe('create', () => {
    it('creates a monitor with the documented defaults and the create envelope', async () => {
      const res = await api('POST', '/monitors', valid());
      assert.equal(res.status, 201);
      assert.equal(res.body.message, 'Monitor created successfully');
      const m = res.body.data;
      assert.match(m.id, uuid);
      assert.equal(m.name, 'Home page');
      assert.equal(m.url, 'https://example.com/');
      assert.equal(m.project_id, ada.project_id);
      assert.equal(m.method, 'GET');
      assert.equal(m._method, undefined);
      assert.equal(m.active, true);
      assert.deepEqual(
        m.valid_http_codes,
        Array.from({ length: 100 }, (_, i) => 200 + i),
      );
      assert.equal(m.basic_auth_username, null);
      assert.equal('basic_auth_password' in m, false);
      assert.equal(m.status, 0);
      assert.equal(m.uptime, 100);
      assert.equal(m.last_checked, 'never');
      assert.equal(m.incidents_count, 0);
      assert.equal(m.last_incident_duration, 0);
      assert.equal(m.interval, 60);
      assert.equal(m.timeout, 10);
      assert.equal(m.regions, null);
      assert.deepEqual(m.integration_ids, []);
      assert.equal(m.follow_redirects, true);
      assert.deepEqual(m.tags, []);
      assert.deepEqual(m.certificate_expiry_days, [30, 14, 7, 1]);
      assert.deepEqual(m.domain_expiry_days, [30, 14, 7, 1]);
      assert.match(m.created_at, timestampFormat);
      assert.match(m.updated_at, timestampFormat);
      assert.deepEqual(m.project, { id: ada.project_id, name: 'Default', description: '' });
    });

    it('takes _method in and returns method, for every method', async () => {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']) {
        const res = await api('POST', '/monitors', { ...valid(), _method: method });
        assert.equal(res.status, 201);
        assert.equal(res.body.data.method, method);
      }
      assertInvalid(await api('POST', '/monitors', { ...valid(), _method: 'get' }), ['_method']);
      assertInvalid(await api('POST', '/monitors', { ...valid(), _method: 'TRACE' }), ['_method']);
    });

    it('accepts the basic-auth password, stores it sealed and never returns it', async () => {
      const res = await api('POST', '/monitors', { ...valid(), basic_auth_username: 'ops', basic_auth_password: 'hunter2-secret' });
      assert.equal(res.status, 201);
      assert.equal(res.body.data.basic_auth_username, 'ops');
      assert.doesNotMatch(JSON.stringify(res.body), /hunter2-secret/);
      const [row] = await cp.db.sql`select basic_auth_password_sealed as s from monitors where id = ${res.body.data.id}`;
      assert.doesNotMatch(row!.s as string, /hunter2/);
      assert.equal(open(row!.s as string, cp.cp.keys.checkCredentials), 'hunter2-secret');
      const read = await api('GET', `/monitors/${res.body.data.id}`);
      assert.doesNotMatch(JSON.stringify(read.body), /hunter2-secret|basic_auth_password/);
    });

    it('creates an inactive monitor as paused (status 3)', async () => {
      const res = await api('POST', '/monitors', { ...valid(), active: false });
      assert.equal(res.body.data.active, false);
      assert.equal(res.body.data.status, 3);
    });

    it('requires name, url and project_id', async () => {
      const res = await api('POST', '/monitors', {});
      assertInvalid(res, ['name', 'url', 'project_id']);
      assert.deepEqual(res.body.errors.name, ['The name field is required.']);
    });

    const edges: [string, Record<string, unknown>, boolean][] = [
      ['name of 255 characters', { name: 'n'.repeat(255) }, true],
      ['name of 256 characters', { name: 'n'.repeat(256) }, false],
      ['an empty name', { name: '' }, false],
      ['url of 2048 characters', { url: `https://example.com/${'a'.repeat(2048 - 20)}` }, true],
      ['url of 2049 characters', { url: `https://example.com/${'a'.repeat(2049 - 20)}` }, false],
      ['a url that is not one', { url: 'example' }, false],
      ['a url of another scheme', { url: 'ftp://example.com/' }, false],
      ['valid_http_codes at 100 and 599', { valid_http_codes: [100, 599] }, true],
      ['valid_http_codes at 99', { valid_http_codes: [99] }, false],
      ['valid_http_codes at 600', { valid_http_codes: [600] }, false],
      ['valid_http_codes with a fraction', { valid_http_codes: [200.5] }, false],
      ['valid_http_codes as strings', { valid_http_codes: ['200'] }, false],
      ['basic_auth_username of 255', { basic_auth_username: 'u'.repeat(255) }, true],
      ['basic_auth_username of 256', { basic_auth_username: 'u'.repeat(256) }, false],
      ['basic_auth_password of 255', { basic_auth_password: 'p'.repeat(255) }, true],
      ['basic_auth_password of 256', { basic_auth_password: 'p'.repeat(256) }, false],
      ['null basic auth', { basic_auth_username: null, basic_auth_password: null }, true],
      ['active as a string', { active: 'yes' }, false],
      ['interval 5', { interval: 5 }, true],
      ['interval 4', { interval: 4 }, false],
      ['interval 86400', { interval: 86400 }, true],
      ['interval 86401', { interval: 86401 }, false],
      ['timeout 1', { timeout: 1 }, true],
      ['timeout 0', { timeout: 0 }, false],
      ['timeout 60', { timeout: 60 }, true],
      ['timeout 61', { timeout: 61 }, false],
      ['timeout above interval', { interval: 5, timeout: 6 }, false],
      ['regions named', { regions: ['eu-west', 'us-east'] }, true],
      ['a region with a space', { regions: ['eu west'] }, false],
      ['project_id that is not a uuid', { project_id: 'abc' }, false],
    ];
    for (const [name, patch, ok] of edges) {
      it(`${ok ? 'accepts' : 'refuses'} ${name}`, async () => {
        const res = await api('POST', '/monitors', { ...valid(), ...patch });
        if (ok) assert.equal(res.status, 201, JSON.stringify(res.body));
        else
          assertInvalid(
            res,
            Object.keys(patch)
              .filter((k) => !(k === 'interval' && 'timeout' in patch))
              .map((k) => (k === 'valid_http_codes' || k === 'regions' ? `${k}.0` : k)),
          );
      });
    }

    it('names the offending item of valid_http_codes', async () => {
      const res = await api('POST', '/monitors', { ...valid(), valid_http_codes: [200, 700, 301, 42] });
      assertInvalid(res, ['valid_http_codes.1', 'valid_http_codes.3']);
    });

    it('defaults the timeout to the interval when the interval is under 10 s', async () => {
      const res = await api('POST', '/monitors', { ...valid(), interval: 7 });
      assert.equal(res.body.data.timeout, 7);
    });

    it('answers malformed JSON with 400 and a message', async () => {
      const res = await api('POST', '/monitors', '{"name": ');
      assert.equal(res.status, 400);
      assert.equal(typeof res.body.message, 'string');
    });

    it('refuses integrations of another project', async () => {
      const bob = await createAccount(cp.db.sql);
      const [integration] = await cp.db
        .sql`insert into integrations (project_id, name, type) values (${bob.project_id}, 'x', 'webhook') returning id`;
      const res = await api('POST', '/monitors', { ...valid(), integration_ids: [integration!.id] });
      assertInvalid(res, ['integration_ids.0']);
      const [mine] = await cp.db
        .sql`insert into integrations (project_id, name, type) values (${ada.project_id}, 'y', 'webhook') returning id`;
      const ok = await api('POST', '/monitors', { ...valid(), integration_ids: [mine!.id] });
      assert.deepEqual(ok.body.data.integration_ids, [mine!.id]);
    });
  });

  describe('tags', () => {
    it('stores tags trimmed, in lower case and each once, and returns them on every read', async () => {
      const res = await api('POST', '/monitors', { ...valid(), tags: [' Prod ', 'prod', 'EU West', 'checkout.v2', 'team_a-1'] });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.tags, ['prod', 'eu west', 'checkout.v2', 'team_a-1']);
      assert.deepEqual((await api('GET', `/monitors/${res.body.data.id}`)).body.data.tags, ['prod', 'eu west', 'checkout.v2', 'team_a-1']);
    });

    it('replaces the tags on update when sent, keeps them when not, and empties them with []', async () => {
      const { id } = (await api('POST', '/monitors', { ...valid(), tags: ['a', 'b'] })).body.data;
      assert.deepEqual((await api('PUT', `/monitors/${id}`, { name: 'Renamed' })).body.data.tags, ['a', 'b']);
      assert.deepEqual((await api('PUT', `/monitors/${id}`, { tags: ['c'] })).body.data.tags, ['c']);
      assert.deepEqual((await api('PUT', `/monitors/${id}`, { tags: [] })).body.data.tags, []);
    });

    it('refuses more than 10 tags, and tags that are empty, too long or hold other characters, naming the field', async () => {
      const ten = Array.from({ length: 10 }, (_, i) => `t${i}`);
      assert.equal((await api('POST', '/monitors', { ...valid(), tags: ten })).status, 201);
      assert.equal((await api('POST', '/monitors', { ...valid(), tags: ['x'.repeat(32)] })).status, 201);
      const tooMany = await api('POST', '/monitors', { ...valid(), tags: [...ten, 't10'] });
      assertInvalid(tooMany, ['tags']);
      assert.deepEqual(tooMany.body.errors.tags, ['The tags field must not have more than 10 items.']);
      for (const bad of ['', ' ', 'x'.repeat(33), 'a/b', '-lead', 'trail.', 'ünï', 'a\u0000b']) {
        const res = await api('POST', '/monitors', { ...valid(), tags: ['ok', bad] });
        assertInvalid(res, ['tags.1']);
        assert.match(res.body.errors['tags.1'][0], /^The tags(\.1)? field /);
      }
      assertInvalid(await api('POST', '/monitors', { ...valid(), tags: 'prod' }), ['tags']);
      const { id } = (await api('POST', '/monitors', valid())).body.data;
      assertInvalid(await api('PUT', `/monitors/${id}`, { tags: ['a', 'b/c'] }), ['tags.1']);
    });
  });

  describe('update', () => {
    it('replaces the fields sent, keeps the others, ignores project_id and answers with the update envelope', async () => {
      const created = (await api('POST', '/monitors', { ...valid(), basic_auth_username: 'u', basic_auth_password: 'keep-me' })).body.data;
      const bob = await createAccount(cp.db.sql);
      const res = await api('PUT', `/monitors/${created.id}`, {
        name: 'Renamed',
        _method: 'HEAD',
        active: false,
        project_id: bob.project_id,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.message, 'Monitor updated successfully');
      const m = res.body.data;
      assert.equal(m.name, 'Renamed');
      assert.equal(m.method, 'HEAD');
      assert.equal(m.active, false);
      assert.equal(m.status, 3);
      assert.equal(m.url, created.url);
      assert.equal(m.project_id, ada.project_id);
      assert.equal(m.basic_auth_username, 'u');
      assert.ok(m.updated_at >= created.updated_at);
      const [row] = await cp.db.sql`select basic_auth_password_sealed as s from monitors where id = ${created.id}`;
      assert.equal(open(row!.s as string, cp.cp.keys.checkCredentials), 'keep-me');
    });

    it('clears the password with null', async () => {
      const created = (await api('POST', '/monitors', { ...valid(), basic_auth_password: 'x' })).body.data;
      await api('PUT', `/monitors/${created.id}`, { basic_auth_password: null });
      const [row] = await cp.db.sql`select basic_auth_password_sealed as s from monitors where id = ${created.id}`;
      assert.equal(row!.s, null);
    });

    it('applies the same bounds as create', async () => {
      const created = (await api('POST', '/monitors', valid())).body.data;
      assertInvalid(await api('PUT', `/monitors/${created.id}`, { name: 'n'.repeat(256) }), ['name']);
      assertInvalid(await api('PUT', `/monitors/${created.id}`, { valid_http_codes: [99] }), ['valid_http_codes.0']);
      assertInvalid(await api('PUT', `/monitors/${created.id}`, { url: 'nope' }), ['url']);
      assertInvalid(await api('PUT', `/monitors/${created.id}`, { timeout: 30, interval: 10 }), ['timeout']);
      assertInvalid(await api('PUT', `/monitors/${created.id}`, { timeout: 61 }), ['timeout']);
    });

    it('pulls the timeout down with a shorter interval', async () => {
      const created = (await api('POST', '/monitors', valid())).body.data;
      const res = await api('PUT', `/monitors/${created.id}`, { interval: 5 });
      assert.equal(res.body.data.interval, 5);
      assert.equal(res.body.data.timeout, 5);
    });
  });

  describe('read', () => {
    it('derives uptime, incidents_count and last_incident_duration from incidents', async () => {
      const created = (await api('POST', '/monitors', valid())).body.data;
      await cp.db
        .sql`update monitors set created_at = now() - interval '10 days', last_checked_at = now() - interval '12 seconds' where id = ${created.id}`;
      await cp.db.sql`insert into incidents (monitor_id, started_at, ended_at, cause) values
        (${created.id}, now() - interval '5 days', now() - interval '5 days' + interval '1 hour', 'timeout'),
        (${created.id}, now() - interval '2 days', now() - interval '2 days' + interval '90 seconds', 'status')`;
      const m = (await api('GET', `/monitors/${created.id}`)).body.data;
      assert.equal(m.incidents_count, 2);
      assert.equal(m.last_incident_duration, 90);
      const expected = Math.round(100 * (1 - 3690 / (10 * 86400)) * 1000) / 1000;
      assert.ok(Math.abs(m.uptime - expected) <= 0.001, `${m.uptime} ~ ${expected}`);
      assert.match(m.last_checked, /^1[23] seconds ago$/);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const res = await api('GET', `/monitors/${id}`);
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { message: 'Not found' });
      }
    });

    it('deletes with 204, after which the monitor is gone', async () => {
      const created = (await api('POST', '/monitors', valid())).body.data;
      const res = await api('DELETE', `/monitors/${created.id}`);
      assert.equal(res.status, 204);
      assert.equal((await api('GET', `/monitors/${created.id}`)).status, 404);
      assert.equal((await api('DELETE', `/monitors/${created.id}`)).status, 404);
    });
  });
});

describe('monitor lists', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let second: string;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    second = (await api('POST', '/projects', { name: 'Second' })).body.data.id;
    for (let i = 0; i < 27; i++) await api('POST', '/monitors', { name: `m${i}`, url: 'https://example.com', project_id: ada.project_id });
    for (let i = 0; i < 3; i++) await api('POST', '/monitors', { name: `s${i}`, url: 'https://example.com', project_id: second });
  });
  after(() => cp.stop());

  it('pages 25 at a time by default with the list meta', async () => {
    const p1 = await api('GET', `/monitors?project_id=${ada.project_id}`);
    assert.equal(p1.status, 200);
    assert.equal(p1.body.data.length, 25);
    assert.deepEqual(p1.body.meta, { current_page: 1, per_page: 25, total: 27, last_page: 2 });
    const p2 = await api('GET', `/monitors?project_id=${ada.project_id}&page=2`);
    assert.equal(p2.body.data.length, 2);
    assert.deepEqual(p2.body.meta, { current_page: 2, per_page: 25, total: 27, last_page: 2 });
    const names = [...p1.body.data, ...p2.body.data].map((m: { name: string }) => m.name);
    assert.equal(new Set(names).size, 27, 'no monitor twice across pages');
  });

  it('answers a page past the end with empty data and correct meta', async () => {
    const res = await api('GET', `/monitors?project_id=${ada.project_id}&page=9`);
    assert.deepEqual(res.body, { data: [], meta: { current_page: 9, per_page: 25, total: 27, last_page: 2 } });
  });

  it('lists every project of the caller without the filter', async () => {
    const res = await api('GET', '/monitors?per_page=100');
    assert.equal(res.body.meta.total, 30);
    assert.equal(res.body.data.length, 30);
  });

  it('accepts per_page 1..100 and refuses others', async () => {
    assert.equal((await api('GET', '/monitors?per_page=1')).body.data.length, 1);
    assert.equal((await api('GET', '/monitors?per_page=100')).status, 200);
    assertInvalid(await api('GET', '/monitors?per_page=0'), ['per_page']);
    assertInvalid(await api('GET', '/monitors?per_page=101'), ['per_page']);
  });

  for (const page of ['0', '-1', 'abc', '1.5', '']) {
    it(`refuses page=${JSON.stringify(page)} with 422`, async () => {
      assertInvalid(await api('GET', `/monitors?page=${page}`), ['page']);
    });
  }

  it('reports last_page 1 for an empty list', async () => {
    const empty = (await api('POST', '/projects', { name: 'Empty' })).body.data.id;
    const res = await api('GET', `/monitors?project_id=${empty}`);
    assert.deepEqual(res.body, { data: [], meta: { current_page: 1, per_page: 25, total: 0, last_page: 1 } });
  });

  it('refuses a malformed project_id with 422', async () => {
    assertInvalid(await api('GET', '/monitors?project_id=nope'), ['project_id']);
  });

  it('lists only the monitors carrying a tag, in any case, with their count', async () => {
    const tagged = [];
    for (const [i, project] of [ada.project_id, ada.project_id, second].entries()) {
      tagged.push(
        (await api('POST', '/monitors', { name: `t${i}`, url: 'https://example.com', project_id: project, tags: ['edge', `n${i}`] })).body
          .data.id,
      );
    }
    const all = await api('GET', '/monitors?tag=EDGE');
    assert.deepEqual(all.body.data.map((m: { id: string }) => m.id).sort(), [...tagged].sort());
    assert.equal(all.body.meta.total, 3);
    const one = await api('GET', `/monitors?tag=edge&project_id=${second}`);
    assert.deepEqual(
      one.body.data.map((m: { id: string }) => m.id),
      [tagged[2]],
    );
    assert.deepEqual(one.body.meta, { current_page: 1, per_page: 25, total: 1, last_page: 1 });
    assert.deepEqual((await api('GET', '/monitors?tag=edge&per_page=1&page=5')).body.meta, {
      current_page: 5,
      per_page: 1,
      total: 3,
      last_page: 3,
    });
    assert.deepEqual((await api('GET', '/monitors?tag=nobody')).body.meta.total, 0);
    assertInvalid(await api('GET', '/monitors?tag=a/b'), ['tag']);
    // Without the filter, the list is what it was.
    assert.equal((await api('GET', '/monitors?per_page=100')).body.meta.total, 33);
  });
});

describe('monitor tenant isolation', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let eve: TestAccount;
  let monitorId: string;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    eve = await createAccount(cp.db.sql);
    monitorId = (
      await apiClient(cp.url, ada.token)('POST', '/monitors', { name: 'a', url: 'https://a.example', project_id: ada.project_id })
    ).body.data.id;
  });
  after(() => cp.stop());

  it("hides another tenant's monitor by id: GET, PUT and DELETE answer 404", async () => {
    const evil = apiClient(cp.url, eve.token);
    for (const [method, body, suffix] of [
      ['GET'],
      ['PUT', { name: 'pwned' }],
      ['DELETE'],
      ['GET', undefined, '/results'],
      ['GET', undefined, '/incidents'],
    ] as const) {
      const res = await evil(method, `/monitors/${monitorId}${suffix ?? ''}`, body);
      assert.equal(res.status, 404, method);
      assert.deepEqual(res.body, { message: 'Not found' });
    }
    const still = await apiClient(cp.url, ada.token)('GET', `/monitors/${monitorId}`);
    assert.equal(still.body.data.name, 'a');
  });

  it("answers 403 Unauthorized access for another tenant's project_id, in a list or a create", async () => {
    const evil = apiClient(cp.url, eve.token);
    const list = await evil('GET', `/monitors?project_id=${ada.project_id}`);
    assert.equal(list.status, 403);
    assert.deepEqual(list.body, { message: 'Unauthorized access' });
    const create = await evil('POST', '/monitors', { name: 'x', url: 'https://x.example', project_id: ada.project_id });
    assert.equal(create.status, 403);
    assert.deepEqual(create.body, { message: 'Unauthorized access' });
  });

  it('answers 403 for a project that does not exist at all', async () => {
    const res = await apiClient(cp.url, eve.token)('GET', '/monitors?project_id=00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 403);
  });

  it("never lists another tenant's monitors", async () => {
    const res = await apiClient(cp.url, eve.token)('GET', '/monitors');
    assert.deepEqual(res.body.data, []);
  });

  it('answers 401 without a token on every monitor route', async () => {
    const anon = apiClient(cp.url);
    for (const [method, path] of [
      ['GET', '/monitors'],
      ['POST', '/monitors'],
      ['GET', `/monitors/${monitorId}`],
      ['PUT', `/monitors/${monitorId}`],
      ['DELETE', `/monitors/${monitorId}`],
    ]) {
      const res = await anon(method!, path!, method === 'POST' || method === 'PUT' ? {} : undefined);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.deepEqual(res.body, { message: 'Unauthorized' });
    }
  });
});
