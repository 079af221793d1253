import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { csrfOf, webClient, type WebClient } from '../web/client.ts';

/** The status pages of the dashboard, as a browser without scripts uses them: plain forms, one post each. */
describe('status pages in the dashboard', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;
  let shop: string;
  let search: string;
  let backup: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://example.com', project_id: ada.project_id })).body.data.id as string;
    shop = await monitor('Shop');
    search = await monitor('Search');
    backup = (await api('POST', '/heartbeats', { name: 'Nightly backup', project_id: ada.project_id })).body.data.id;
  });
  after(() => cp.stop());

  const pageIds = async () => (await api('GET', `/status-pages?project_id=${ada.project_id}`)).body.data.map((p: { id: string }) => p.id);

  it('offers every monitor and heartbeat of the project in rows that work without a script, the title prefilled', async () => {
    const form = await web.get('/app/status-pages/new');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="title"[^>]*value="Default"|value="Default"[^>]*name="title"/s, 'the project name as the title');
    for (const name of [
      'groups.0.name',
      'groups.0.components.0.subject',
      'groups.0.components.2.display_name',
      'groups.0.components.2.description',
    ]) {
      assert.match(form.text, new RegExp(`name="${name.replace(/\./g, '\\.')}"`), name);
    }
    assert.match(form.text, new RegExp(`<option value="monitor:${shop}"\\s*>Shop</option>`));
    assert.match(form.text, new RegExp(`<option value="heartbeat:${backup}"\\s*>Nightly backup</option>`));
    assert.match(form.text, /<optgroup label="Monitors">/);
    assert.match(form.text, /data-rows="Add a component"/);
    // Every row has a label of its own for screen readers and phones.
    assert.match(form.text, /<label class="row-label" for="f-groups\.0\.components\.1\.subject">Group 1, component 2<\/label>/);
  });

  it('creates a page with groups and components from one plain form post, empty rows ignored', async () => {
    const before = await pageIds();
    const res = await web.submit('/app/status-pages/new', '/app/status-pages', {
      title: 'Shop status',
      description: 'For customers',
      'groups.0.name': 'Storefront',
      'groups.0.components.0.subject': `monitor:${shop}`,
      'groups.0.components.0.display_name': 'Web shop',
      'groups.0.components.0.description': 'Browse and buy',
      'groups.0.components.1.subject': '',
      'groups.0.components.1.display_name': '',
      'groups.0.components.1.description': '',
      'groups.0.components.2.subject': `monitor:${search}`,
      'groups.0.components.2.display_name': '',
      'groups.0.components.2.description': '',
      'groups.1.name': 'Jobs',
      'groups.1.components.0.subject': `heartbeat:${backup}`,
      'groups.1.components.0.display_name': '',
      'groups.1.components.0.description': '',
      'groups.2.name': '',
      'groups.2.components.0.subject': '',
      'groups.2.components.0.display_name': '',
      'groups.2.components.0.description': '',
    });
    assert.equal(res.status, 303, res.text.slice(0, 500));
    assert.match(res.location!, /^\/app\/status-pages#p-/);
    const [id] = (await pageIds()).filter((x: string) => !before.includes(x));
    const page = (await api('GET', `/status-pages/${id}`)).body.data;
    assert.equal(page.title, 'Shop status');
    assert.equal(page.description, 'For customers');
    assert.deepEqual(
      page.groups.map((g: any) => ({
        name: g.name,
        components: g.components.map((c: any) => [c.type, c.id, c.display_name, c.description]),
      })),
      [
        {
          name: 'Storefront',
          components: [
            ['monitor', shop, 'Web shop', 'Browse and buy'],
            ['monitor', search, null, ''],
          ],
        },
        { name: 'Jobs', components: [['heartbeat', backup, null, '']] },
      ],
    );
    const list = await web.get('/app/status-pages');
    assert.match(list.text, /Shop status/);
    assert.match(list.text, /Storefront, Jobs/);
    assert.match(list.text, /All systems operational/);
    assert.match(list.text, new RegExp(`href="/status/${page.slug}"`));
  });

  it('shows the form again with the messages under the rows they are about', async () => {
    const form = await web.get('/app/status-pages/new');
    const before = await pageIds();
    const res = await web.post('/app/status-pages', {
      _csrf: csrfOf(form.text),
      title: 'Broken',
      'groups.0.name': '',
      'groups.0.components.0.subject': `monitor:${shop}`,
      'groups.1.name': 'Second',
      'groups.1.components.0.subject': '',
      'groups.1.components.0.display_name': 'A name without a subject',
      'groups.3.name': 'Fourth',
      'groups.3.components.4.subject': `monitor:${shop}`,
    });
    assert.equal(res.status, 422);
    const errorUnder = (field: string) => {
      const at = res.text.indexOf(`id="f-${field}"`);
      assert.ok(at > 0, `${field} is on the page`);
      return res.text.slice(at, res.text.indexOf('</div>', res.text.indexOf('class="error"', at)) + 6);
    };
    assert.match(errorUnder('groups.0.name'), /Name the group\./);
    assert.match(errorUnder('groups.1.components.0.subject'), /Choose a monitor or heartbeat\./);
    assert.match(res.text, /value="A name without a subject"/, 'what was typed stays');
    assert.deepEqual(await pageIds(), before, 'nothing saved');

    const foreign = (
      await apiClient(cp.url, bob.token)('POST', '/monitors', { name: 'Bob', url: 'https://bob.example', project_id: bob.project_id })
    ).body.data.id;
    const again = await web.post('/app/status-pages', {
      _csrf: csrfOf(form.text),
      title: 'Twice',
      'groups.0.name': 'A',
      'groups.0.components.0.subject': `monitor:${shop}`,
      'groups.2.name': 'B',
      'groups.2.components.3.subject': `monitor:${shop}`,
      'groups.2.components.5.subject': `monitor:${foreign}`,
    });
    assert.equal(again.status, 422);
    // The second group of the body is the form's third, its first component the form's fourth row.
    assert.match(again.text, /id="f-groups\.2\.components\.3\.subject"[^]*?on the page already/);
  });

  it('edits a page: the form holds what it shows, and a save replaces it', async () => {
    const p = (
      await api('POST', '/status-pages', {
        project_id: ada.project_id,
        title: 'Edit me',
        groups: [{ name: 'Web', components: [{ type: 'monitor', id: shop, display_name: 'Shop front' }] }],
      })
    ).body.data;
    const form = await web.get(`/app/status-pages/${p.id}/edit`);
    assert.equal(form.status, 200);
    assert.match(form.text, /name="groups\.0\.name"[^>]*value="Web"/s);
    assert.match(form.text, new RegExp(`<option value="monitor:${shop}"\\s*selected\\s*>Shop</option>`));
    assert.match(form.text, /value="Shop front"/);
    assert.match(form.text, /name="groups\.1\.name"/, 'an empty group more to add with');
    const saved = await web.post(`/app/status-pages/${p.id}/edit`, {
      _csrf: csrfOf(form.text),
      title: 'Edited',
      description: '',
      'groups.0.name': '',
      'groups.0.components.0.subject': '',
      'groups.0.components.0.display_name': '',
      'groups.1.name': 'Jobs',
      'groups.1.components.0.subject': `heartbeat:${backup}`,
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 300));
    const after = (await api('GET', `/status-pages/${p.id}`)).body.data;
    assert.equal(after.title, 'Edited');
    assert.deepEqual(
      after.groups.map((g: any) => [g.name, g.components.map((c: any) => c.id)]),
      [['Jobs', [backup]]],
    );
  });

  it('sets and clears a custom domain from the form, and shows a bad one under its field', async () => {
    const p = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Domain' })).body.data;
    const form = await web.get(`/app/status-pages/${p.id}/edit`);
    assert.match(form.text, /name="custom_domain"/);
    const bad = await web.post(`/app/status-pages/${p.id}/edit`, { _csrf: csrfOf(form.text), title: 'Domain', custom_domain: 'https://x' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="f-custom_domain"[^]*?Give a host name/);
    const saved = await web.post(`/app/status-pages/${p.id}/edit`, {
      _csrf: csrfOf(form.text),
      title: 'Domain',
      custom_domain: 'Status.Form.example',
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 300));
    assert.equal((await api('GET', `/status-pages/${p.id}`)).body.data.custom_domain, 'status.form.example');
    const again = await web.get(`/app/status-pages/${p.id}/edit`);
    assert.match(again.text, /name="custom_domain"[^>]*value="status\.form\.example"/s);
    await web.post(`/app/status-pages/${p.id}/edit`, { _csrf: csrfOf(form.text), title: 'Domain', custom_domain: '' });
    assert.equal((await api('GET', `/status-pages/${p.id}`)).body.data.custom_domain, null);
  });

  it("answers another tenant's page with a 404 and shows the dashboard's pages of its own project only", async () => {
    const p = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Private title' })).body.data;
    const bobWeb = webClient(cp.url);
    await bobWeb.signIn(bob.email, bob.password);
    assert.equal((await bobWeb.get(`/app/status-pages/${p.id}/edit`)).status, 404);
    const list = await bobWeb.get('/app/status-pages');
    assert.equal(list.status, 200);
    assert.doesNotMatch(list.text, /Private title/);
    const form = await bobWeb.get('/app/status-pages/new');
    assert.doesNotMatch(form.text, new RegExp(shop));
    const refused = await bobWeb.post(`/app/status-pages/${p.id}/delete`, { _csrf: csrfOf(form.text) });
    assert.equal(refused.status, 404);
    assert.equal((await api('GET', `/status-pages/${p.id}`)).status, 200);
  });
  it('takes a password and allowed addresses in the form, never shows the password, and names a bad address under its field', async () => {
    const res = await web.submit('/app/status-pages/new', '/app/status-pages', {
      title: 'Team only',
      password: 'correct horse',
      ip_allowlist: '203.0.113.0/24\n198.51.100.7',
      'groups.0.name': '',
    });
    assert.equal(res.status, 303, res.text.slice(0, 500));
    const id = res.location!.split('#p-')[1]!;
    const stored = (await api('GET', `/status-pages/${id}`)).body.data;
    assert.equal(stored.password_protected, true);
    assert.deepEqual(stored.ip_allowlist, ['203.0.113.0/24', '198.51.100.7']);

    const edit = await web.get(`/app/status-pages/${id}/edit`);
    assert.match(edit.text, /New password \(optional\)/);
    assert.match(edit.text, /<input\s+id="f-password"\s+name="password"\s+type="password"\s+value=""/);
    assert.doesNotMatch(edit.text, /correct horse/);
    assert.match(edit.text, /name="remove_password"/);
    assert.match(edit.text, /203\.0\.113\.0\/24\n198\.51\.100\.7<\/textarea>/);

    const bad = await web.submit(`/app/status-pages/${id}/edit`, `/app/status-pages/${id}/edit`, {
      title: 'Team only',
      password: 'short',
      ip_allowlist: '203.0.113.0/24\n10.0.0.0/99',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /10\.0\.0\.0\/99: Give an IP address or a CIDR range/);
    assert.match(bad.text, /Use at least 8 characters/);
    assert.doesNotMatch(bad.text, /value="short"/, 'a password typed is not sent back');

    const removed = await web.submit(`/app/status-pages/${id}/edit`, `/app/status-pages/${id}/edit`, {
      title: 'Team only',
      remove_password: 'on',
      ip_allowlist: '',
    });
    assert.equal(removed.status, 303, removed.text.slice(0, 500));
    const after = (await api('GET', `/status-pages/${id}`)).body.data;
    assert.equal(after.password_protected, false);
    assert.deepEqual(after.ip_allowlist, []);
  });
});
