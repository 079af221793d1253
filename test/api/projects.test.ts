import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, assertInvalid, timestampFormat, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

describe('organizations and projects API', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let eve: TestAccount;
  let api: Call;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql);
    eve = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it("lists the caller's organizations with their role", async () => {
    const res = await api('GET', '/organizations');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 1);
    assert.equal(res.body.data[0].id, ada.organization_id);
    assert.equal(res.body.data[0].role, 'owner');
    assert.match(res.body.data[0].created_at, timestampFormat);
    assert.deepEqual(res.body.meta, { current_page: 1, per_page: 25, total: 1, last_page: 1 });
  });

  it("lists the projects of the caller's organizations, starting with Default", async () => {
    const res = await api('GET', '/projects');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((p: { name: string }) => p.name),
      ['Default'],
    );
    assert.equal(res.body.data[0].organization_id, ada.organization_id);
  });

  it('creates, reads, updates and deletes a project with the envelopes', async () => {
    const created = await api('POST', '/projects', { name: 'Payments', description: 'Card flows' });
    assert.equal(created.status, 201);
    assert.equal(created.body.message, 'Project created successfully');
    assert.equal(created.body.data.organization_id, ada.organization_id);
    assert.equal(created.body.data.description, 'Card flows');
    const id = created.body.data.id;
    assert.deepEqual((await api('GET', `/projects/${id}`)).body.data, created.body.data);
    const updated = await api('PUT', `/projects/${id}`, { name: 'Payments EU' });
    assert.equal(updated.body.message, 'Project updated successfully');
    assert.equal(updated.body.data.name, 'Payments EU');
    assert.equal(updated.body.data.description, 'Card flows');
    assert.equal((await api('DELETE', `/projects/${id}`)).status, 204);
    assert.equal((await api('GET', `/projects/${id}`)).status, 404);
  });

  it("deletes a project's monitors with it", async () => {
    const id = (await api('POST', '/projects', { name: 'Temp' })).body.data.id;
    const m = (await api('POST', '/monitors', { name: 'x', url: 'https://x.example', project_id: id })).body.data.id;
    await api('DELETE', `/projects/${id}`);
    assert.equal((await api('GET', `/monitors/${m}`)).status, 404);
  });

  it('validates names', async () => {
    assertInvalid(await api('POST', '/projects', {}), ['name']);
    assertInvalid(await api('POST', '/projects', { name: 'n'.repeat(256) }), ['name']);
    assert.equal((await api('POST', '/projects', { name: 'n'.repeat(255) })).status, 201);
  });

  it("refuses to create a project in another tenant's organization", async () => {
    const res = await api('POST', '/projects', { name: 'x', organization_id: eve.organization_id });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { message: 'Unauthorized access' });
  });

  it("hides another tenant's project by id", async () => {
    const evil = apiClient(cp.url, eve.token);
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as const) {
      const res = await evil(method, `/projects/${ada.project_id}`, body);
      assert.equal(res.status, 404, method);
      assert.deepEqual(res.body, { message: 'Not found' });
    }
  });

  it('lets only owners delete a project', async () => {
    await cp.db.sql`insert into memberships (organization_id, user_id, role) values (${ada.organization_id}, ${eve.user_id}, 'member')`;
    const evil = apiClient(cp.url, eve.token);
    const seen = await evil('GET', `/projects/${ada.project_id}`);
    assert.equal(seen.status, 200, 'members read the projects of their organizations');
    const res = await evil('DELETE', `/projects/${ada.project_id}`);
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { message: 'Unauthorized access' });
    await cp.db.sql`delete from memberships where user_id = ${eve.user_id} and organization_id = ${ada.organization_id}`;
  });
});

describe('OpenAPI document', () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
  });
  after(() => cp.stop());

  it('describes every API route at /openapi.json as OpenAPI 3.1, without a token', async () => {
    const res = await fetch(`${cp.url}/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; info: { description: string } };
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/monitors', '/monitors/{id}', '/projects', '/projects/{id}', '/organizations']) {
      assert.ok(doc.paths[path], `${path} documented`);
    }
    assert.ok(doc.paths['/monitors']!.post, 'POST /monitors');
    assert.ok(doc.paths['/monitors/{id}']!.put, 'PUT /monitors/{id}');
    assert.equal(doc.paths['/healthz'], undefined, 'internal routes are hidden');
    const text = JSON.stringify(doc);
    for (const phrase of [
      'Monitor created successfully',
      'Unauthorized access',
      '"message":"Unauthorized"',
      'Not found',
      'valid_http_codes.0',
    ]) {
      assert.ok(text.includes(phrase.replace(/"/g, '\\"')) || text.includes(phrase), `mentions ${phrase}`);
    }
  });

  it('serves an API reference page at /docs with local assets', async () => {
    const res = await fetch(`${cp.url}/docs/`, { redirect: 'follow' });
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|jsdelivr)/);
    const asset = /src="\.?\/?([^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, 'references a script');
    const js = await fetch(`${cp.url}/docs/${asset.replace(/^docs\//, '')}`);
    assert.equal(js.status, 200);
  });
});

describe('input Postgres cannot store', () => {
  let cp: TestControlPlane;
  let api: Call;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    api = apiClient(cp.url, (await createAccount(cp.db.sql)).token);
  });
  after(() => cp.stop());

  it('refuses a NUL character in a body or query with a 422 naming the field', async () => {
    assertInvalid(await api('POST', '/projects', { name: 'a\u0000b' }), ['name']);
    assertInvalid(
      await api('POST', '/monitors', {
        name: 'x',
        url: 'https://x.example',
        project_id: '00000000-0000-4000-8000-000000000000',
        regions: ['eu', 'u\u0000s'],
      }),
      ['regions.1'],
    );
    assertInvalid(await api('GET', '/monitors?project_id=%00'), ['project_id']);
  });
});
