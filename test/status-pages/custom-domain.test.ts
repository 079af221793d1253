import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

/** A page at a host name of its own: the Host header picks the page at `/`, and nothing else. */
describe('a status page at its own host name', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;

  /** A request with the Host header given (fetch would not let a test set it). */
  const atHost = (host: string, path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { headers: { host, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { STATUS_PAGE_MAX_AGE_SECONDS: '60' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  it('takes a host name on create and update, in lower case, and refuses what is not one, naming the field', async () => {
    const created = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Acme', custom_domain: 'Status.Acme.example' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.custom_domain, 'status.acme.example');
    for (const bad of [
      'https://status.acme.example',
      'status.acme.example:8443',
      'localhost',
      '10.0.0.1',
      'a..b.example',
      'status.acme.example/x',
      '-x.example',
    ]) {
      const res = await api('PATCH', `/status-pages/${created.body.data.id}`, { custom_domain: bad });
      assert.equal(res.status, 422, bad);
      assert.ok(res.body.errors.custom_domain, bad);
    }
    const other = await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Other', custom_domain: 'status.acme.example' });
    assert.equal(other.status, 409);
    assert.ok(other.body.errors?.custom_domain ?? other.body.message);
    const cleared = await api('PATCH', `/status-pages/${created.body.data.id}`, { custom_domain: null });
    assert.equal(cleared.body.data.custom_domain, null);
    const kept = await api('PATCH', `/status-pages/${created.body.data.id}`, { title: 'Acme 2' });
    assert.equal(kept.body.data.custom_domain, null, 'a PATCH without the field keeps it');
    await api('DELETE', `/status-pages/${created.body.data.id}`);
  });

  it('serves the page named by the Host header at /, and its fragment; the slug address keeps working', async () => {
    const p = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Hosted', custom_domain: 'status.hosted.example' }))
      .body.data;
    const page = await atHost('status.hosted.example', '/');
    assert.equal(page.status, 200);
    assert.match(page.text, /<h1>Hosted<\/h1>/);
    const withPort = await atHost('STATUS.hosted.example:443', '/?fragment=1');
    assert.equal(withPort.status, 200);
    assert.doesNotMatch(withPort.text, /<h1>/, 'the fragment only');
    assert.match(withPort.text, /data-testid="overall"/);
    assert.equal((await atHost('127.0.0.1', `/status/${p.slug}`)).status, 200);
    // The snapshot is the page's: the same validator whichever address served it.
    const bySlug = await atHost('evil.example', `/status/${p.slug}`, { 'accept-encoding': 'identity' });
    const byHost = await atHost('status.hosted.example', '/', { 'accept-encoding': 'identity' });
    assert.equal(bySlug.headers.etag, byHost.headers.etag);
    assert.doesNotMatch(byHost.text, /evil\.example/);
  });

  it('answers 404 at / for a host name no page has, and follows a change of host name at once', async () => {
    const unknown = await atHost('nobody.example', '/');
    assert.equal(unknown.status, 404);
    assert.match(unknown.text, /no status page at this address/);
    const p = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Moving', custom_domain: 'old.moving.example' }))
      .body.data;
    assert.equal((await atHost('old.moving.example', '/')).status, 200);
    assert.equal((await api('PATCH', `/status-pages/${p.id}`, { custom_domain: 'new.moving.example' })).status, 200);
    // The change is announced apart from the write: look until the host map follows it.
    const deadline = Date.now() + 10_000;
    while ((await atHost('new.moving.example', '/')).status !== 200) {
      assert.ok(Date.now() < deadline, 'the new host name never answered');
      await new Promise((r) => setImmediate(r));
    }
    assert.equal((await atHost('old.moving.example', '/')).status, 404);
  });

  it('does not answer the dashboard or the API under a page host name differently than before', async () => {
    await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Scoped', custom_domain: 'status.scoped.example' });
    const redirect = await atHost('status.scoped.example', '/app/monitors');
    assert.notEqual(redirect.status, 200);
    if (redirect.headers.location)
      assert.doesNotMatch(String(redirect.headers.location), /^https?:\/\/status\.scoped/, 'no redirect built from the Host');
  });
});
