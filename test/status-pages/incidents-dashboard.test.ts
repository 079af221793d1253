import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { applyOutageEvents } from '../../control-plane/src/status-pages/incidents/drafter.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { csrfOf, webClient, type WebClient } from '../web/client.ts';

/** A status page's incidents in the dashboard, as a browser without scripts uses them: plain forms, one post each. */
describe('status page incidents in the dashboard', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;
  let shop: string;
  let backup: string;
  let pageId: string;

  const list = () => `/app/status-pages/${pageId}/incidents`;
  const one = (id: string) => `${list()}/${id}`;
  const incident = async (id: string) => (await api('GET', `/status-pages/${pageId}/incidents/${id}`)).body.data;
  /** The HTML of a field from its id to the end of its first error message. */
  const errorUnder = (text: string, field: string) => {
    const at = text.indexOf(`id="f-${field}"`);
    assert.ok(at > 0, `${field} is on the page`);
    return text.slice(at, text.indexOf('</div>', text.indexOf('class="error"', at)) + 6);
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    await cp.db.sql`update users set name = 'Ada Lovelace' where id = ${ada.user_id}`;
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
    shop = (await api('POST', '/monitors', { name: 'shop-prod', url: 'https://example.com', project_id: ada.project_id })).body.data.id;
    backup = (await api('POST', '/heartbeats', { name: 'backup-job', project_id: ada.project_id })).body.data.id;
    pageId = (
      await api('POST', '/status-pages', {
        project_id: ada.project_id,
        title: 'Acme',
        groups: [
          {
            name: 'All',
            components: [
              { type: 'monitor', id: shop, display_name: 'Web shop' },
              { type: 'heartbeat', id: backup },
            ],
          },
        ],
      })
    ).body.data.id;
  });
  after(() => cp.stop());

  it('writes an incident from one plain form post, a draft unless published, and lists it marked as such', async () => {
    const form = await web.get(`${list()}/new`);
    assert.equal(form.status, 200);
    for (const name of ['title', 'impact', 'status', 'message', 'published']) assert.match(form.text, new RegExp(`name="${name}"`), name);
    assert.match(form.text, new RegExp(`<input type="checkbox" name="components" value="monitor:${shop}"\\s*/>\\s*Web shop`));
    assert.match(form.text, new RegExp(`value="heartbeat:${backup}"\\s*/>\\s*backup-job`));

    const res = await web.submit(`${list()}/new`, list(), {
      title: 'Checkout is failing',
      impact: 'major',
      status: 'identified',
      message: 'A bad deploy.\n\n- rolling back',
      components: [`monitor:${shop}`],
    });
    assert.equal(res.status, 303, res.text.slice(0, 400));
    const id = res.location!.split('/').at(-1)!;
    assert.equal(res.location, one(id));
    const saved = await incident(id);
    assert.equal(saved.title, 'Checkout is failing');
    assert.equal(saved.impact, 'major');
    assert.equal(saved.status, 'identified');
    assert.equal(saved.published, false, 'a draft without the box ticked');
    assert.deepEqual(saved.components, [{ type: 'monitor', id: shop, name: 'Web shop' }]);
    assert.equal(saved.updates[0].message, 'A bad deploy.\n\n- rolling back');
    assert.equal(saved.updates[0].by, 'Ada Lovelace');

    const published = await web.submit(`${list()}/new`, list(), {
      title: 'Search is slow',
      impact: 'minor',
      status: 'investigating',
      message: 'Looking.',
      published: 'on',
    });
    assert.equal(published.status, 303);

    const page = await web.get(list());
    assert.equal(page.status, 200);
    const row = (title: string) =>
      new RegExp(`<tr data-incident="[^"]+" data-published="(true|false)">(?:(?!</tr>)[^])*?${title}[^]*?</tr>`).exec(page.text)!;
    assert.equal(row('Checkout is failing')[1], 'false');
    assert.match(row('Checkout is failing')[0], /<span class="pill paused draft-mark" data-published="false">Draft<\/span>/);
    assert.match(row('Search is slow')[0], /data-published="true">Published</);
    assert.match((await web.get('/app/status-pages')).text, new RegExp(`href="${list()}"`), 'the status pages list links here');
  });

  it('shows the new form again with the messages under their fields, and saves nothing', async () => {
    const before = (await api('GET', `/status-pages/${pageId}/incidents`)).body.meta.total;
    const form = await web.get(`${list()}/new`);
    const res = await web.post(list(), {
      _csrf: csrfOf(form.text),
      title: '',
      impact: 'major',
      status: 'investigating',
      message: '',
      components: ['monitor:not-a-uuid'],
    });
    assert.equal(res.status, 422);
    assert.match(errorUnder(res.text, 'title'), /class="error"/);
    assert.match(errorUnder(res.text, 'message'), /class="error"/);
    assert.match(errorUnder(res.text, 'components'), /class="error"/);
    const foreign = (
      await apiClient(cp.url, bob.token)('POST', '/monitors', { name: 'Bob', url: 'https://bob.example', project_id: bob.project_id })
    ).body.data.id;
    const theirs = await web.post(list(), {
      _csrf: csrfOf(form.text),
      title: 'X',
      impact: 'minor',
      status: 'investigating',
      message: 'x',
      components: [`monitor:${foreign}`],
    });
    assert.equal(theirs.status, 422);
    assert.match(errorUnder(theirs.text, 'components'), /Not a monitor this status page shows/);
    assert.equal((await api('GET', `/status-pages/${pageId}/incidents`)).body.meta.total, before);
  });

  it('posts updates, edits the details, publishes and unpublishes, and deletes, from the incident’s page', async () => {
    const created = (await api('POST', `/status-pages/${pageId}/incidents`, { title: 'Login broken', message: 'Looking **now**.' })).body
      .data;
    const page = await web.get(one(created.id));
    assert.equal(page.status, 200);
    assert.match(page.text, /A draft: it is not on the public page until you publish it\./);
    assert.match(page.text, /<strong>now<\/strong>/, 'the timeline renders its Markdown');
    assert.match(page.text, /Ada Lovelace/, 'who posted each update');

    const posted = await web.submit(one(created.id), `${one(created.id)}/updates`, { status: 'monitoring', message: 'A fix is out.' });
    assert.equal(posted.status, 303);
    assert.equal((await incident(created.id)).status, 'monitoring');
    const bad = await web.submit(one(created.id), `${one(created.id)}/updates`, { status: 'monitoring', message: '' });
    assert.equal(bad.status, 422);
    assert.match(errorUnder(bad.text, 'message'), /class="error"/);

    const edited = await web.submit(one(created.id), `${one(created.id)}/edit`, {
      title: 'Login is broken for some',
      impact: 'critical',
      components: [`heartbeat:${backup}`, `monitor:${shop}`],
    });
    assert.equal(edited.status, 303);
    const after = await incident(created.id);
    assert.equal(after.title, 'Login is broken for some');
    assert.equal(after.impact, 'critical');
    assert.deepEqual(
      after.components.map((c: { name: string }) => c.name),
      ['backup-job', 'Web shop'],
    );
    const cleared = await web.submit(one(created.id), `${one(created.id)}/edit`, { title: 'Login is broken for some', impact: 'critical' });
    assert.equal(cleared.status, 303);
    assert.deepEqual((await incident(created.id)).components, [], 'no box ticked: no components');

    assert.equal((await web.submit(one(created.id), `${one(created.id)}/publish`, { published: 'on' })).status, 303);
    assert.equal((await incident(created.id)).published, true);
    assert.doesNotMatch((await web.get(one(created.id))).text, /A draft: it is not on the public page/);
    assert.equal((await web.submit(one(created.id), `${one(created.id)}/publish`, { published: 'off' })).status, 303);
    assert.equal((await incident(created.id)).published, false);

    const deleted = await web.submit(one(created.id), `${one(created.id)}/delete`, {});
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location, list());
    assert.equal((await api('GET', `/status-pages/${pageId}/incidents/${created.id}`)).status, 404);
    assert.equal((await web.get(one(created.id))).status, 404);
  });

  it('writes and publishes a postmortem in a textarea, kept as typed, refusing to publish an empty one', async () => {
    const created = (await api('POST', `/status-pages/${pageId}/incidents`, { title: 'Outage', message: 'Down.', published: true })).body
      .data;
    const empty = await web.submit(one(created.id), `${one(created.id)}/postmortem`, { postmortem: '', postmortem_published: 'on' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /There is no postmortem to publish/);
    const text = '# What happened\r\n\r\n    indented code\r\n\r\nA disk filled up.';
    const saved = await web.submit(one(created.id), `${one(created.id)}/postmortem`, { postmortem: text });
    assert.equal(saved.status, 303);
    const stored = await incident(created.id);
    assert.equal(stored.postmortem, '# What happened\n\n    indented code\n\nA disk filled up.');
    assert.equal(stored.postmortem_published, false);
    const page = await web.get(one(created.id));
    assert.match(page.text, /<textarea[^>]*name="postmortem"[^>]*>\n# What happened\n\n {4}indented code/);
    const shown = await web.submit(one(created.id), `${one(created.id)}/postmortem`, { postmortem: text, postmortem_published: 'on' });
    assert.equal(shown.status, 303);
    assert.equal((await incident(created.id)).postmortem_published, true);
  });

  it('suggests the resolved update once the outage of a draft a person published has ended, ready to post', async () => {
    const monitorIncident = randomUUID();
    const event = (kind: 'monitor.down' | 'monitor.up', at: string) => ({
      id: randomUUID(),
      kind,
      occurred_at: at,
      project_id: ada.project_id,
      subject: { type: 'monitor' as const, id: shop, name: 'shop-prod' },
      data: { incident_id: monitorIncident, duration_seconds: 60 },
    });
    await cp.db.sql.begin((tx) => applyOutageEvents(tx, [event('monitor.down', '2026-11-20T10:00:00Z')]));
    const drafted = (await api('GET', `/status-pages/${pageId}/incidents?status=open`)).body.data.find(
      (i: { source: { monitor_incident_id: string } | null }) => i.source?.monitor_incident_id === monitorIncident,
    );
    assert.ok(drafted, 'drafted');
    const listed = await web.get(list());
    assert.match(listed.text, /Web shop is down<\/a>\s*<span class="pill paused draft-mark"/, 'drafts are marked in the list');
    await web.submit(one(drafted.id), `${one(drafted.id)}/publish`, { published: 'on' });
    await cp.db.sql.begin((tx) => applyOutageEvents(tx, [event('monitor.up', '2026-11-20T10:01:00Z')]));

    const page = await web.get(one(drafted.id));
    assert.match(page.text, /data-testid="suggestion"/);
    assert.match(page.text, /<option value="resolved"\s+selected>Resolved<\/option>/);
    assert.match(page.text, /<textarea[^>]*name="message"[^>]*>\nWeb shop is working again\.<\/textarea>/);
    assert.match(page.text, new RegExp(`<form method="post" action="${one(drafted.id)}/updates"`));
    const posted = await web.submit(one(drafted.id), `${one(drafted.id)}/updates`, {
      status: 'resolved',
      message: 'Web shop is working again.',
    });
    assert.equal(posted.status, 303);
    const resolved = await incident(drafted.id);
    assert.equal(resolved.status, 'resolved');
    assert.doesNotMatch((await web.get(one(drafted.id))).text, /data-testid="suggestion"/);
  });

  it('saves the page’s choice to publish drafted incidents at once, both ways', async () => {
    const edit = `/app/status-pages/${pageId}/edit`;
    const fields = (extra: Record<string, string>) => ({
      title: 'Acme',
      description: '',
      'groups.0.name': 'All',
      'groups.0.components.0.subject': `monitor:${shop}`,
      'groups.0.components.0.display_name': 'Web shop',
      'groups.0.components.0.description': '',
      ...extra,
    });
    assert.match((await web.get(edit)).text, /name="auto_publish_incidents"/);
    assert.equal((await web.submit(edit, edit, fields({ auto_publish_incidents: 'on' }))).status, 303);
    assert.equal((await api('GET', `/status-pages/${pageId}`)).body.data.auto_publish_incidents, true);
    assert.match((await web.get(edit)).text, /name="auto_publish_incidents" value="on"\s+checked/);
    assert.equal((await web.submit(edit, edit, fields({}))).status, 303);
    assert.equal((await api('GET', `/status-pages/${pageId}`)).body.data.auto_publish_incidents, false);
  });

  it('answers another tenant’s incident pages and forms 404', async () => {
    const created = (await api('POST', `/status-pages/${pageId}/incidents`, { title: 'Mine', message: 'x' })).body.data;
    const bobs = webClient(cp.url);
    await bobs.signIn(bob.email, bob.password);
    assert.equal((await bobs.get(list())).status, 404);
    assert.equal((await bobs.get(one(created.id))).status, 404);
    assert.equal((await bobs.get(`${list()}/new`)).status, 404);
    const own = await bobs.get('/app/status-pages/new');
    assert.equal((await bobs.post(`${one(created.id)}/delete`, { _csrf: csrfOf(own.text) })).status, 404);
    assert.equal((await incident(created.id)).title, 'Mine');
  });
});
