import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startSmtpSink, type SmtpSink } from '../notify/smtp.ts';
import { csrfOf, webClient, type WebClient } from '../web/client.ts';

/** A status page's subscribers in the dashboard, as a browser without scripts uses them: plain forms, one post each. */
describe('status page subscribers in the dashboard', () => {
  let cp: TestControlPlane;
  let smtp: SmtpSink;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;
  let pageId: string;

  const list = () => `/app/status-pages/${pageId}/subscribers`;
  const errorUnder = (text: string, field: string) => {
    const at = text.indexOf(`id="f-${field}"`);
    assert.ok(at > 0, `${field} is on the page`);
    return text.slice(at, text.indexOf('</div>', text.indexOf('class="error"', at)) + 6);
  };

  before(async () => {
    smtp = await startSmtpSink();
    cp = await startTestControlPlane({ roles: ['api', 'notify'], env: { SMTP_URL: smtp.url } });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    await cp.db.sql`update users set name = 'Ada Lovelace' where id = ${ada.user_id}`;
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
    pageId = (await api('POST', '/status-pages', { project_id: ada.project_id, title: 'Acme' })).body.data.id;
  });
  after(async () => {
    await cp.stop();
    await smtp.close();
  });

  it('is linked from the status pages list and shows an empty state', async () => {
    const pages = await web.get('/app/status-pages');
    assert.match(pages.text, new RegExp(`href="${list()}"`));
    const res = await web.get(list());
    assert.equal(res.status, 200);
    assert.match(res.text, /No subscribers yet/);
    assert.match(res.text, /Add a subscriber/);
  });

  it('adds an email subscriber (sent a confirmation) and a webhook from one form post each', async () => {
    const page = await web.get(list());
    const email = await web.post(list(), { _csrf: csrfOf(page.text), type: 'email', email: 'grace@example.com', url: '', secret: '' });
    assert.equal(email.status, 303);
    await smtp.waitForMessages(1);
    const hook = await web.post(list(), {
      _csrf: csrfOf(page.text),
      type: 'webhook',
      email: '',
      url: 'https://hooks.example/status',
      secret: 'sixteen-characters-at-least',
    });
    assert.equal(hook.status, 303);
    const shown = await web.get(list());
    assert.match(shown.text, /Webhook added|Webhook to hooks\.example added/);
    const rows = shown.text.match(/<tr data-subscriber="[^"]+">[\s\S]*?<\/tr>/g) ?? [];
    assert.equal(rows.length, 2);
    assert.match(rows[0]!, /grace@example\.com[\s\S]*Waiting for confirmation[\s\S]*by Ada Lovelace/);
    assert.match(rows[1]!, /Webhook to hooks\.example \(signed\)[\s\S]*Active/);
    assert.doesNotMatch(shown.text, /hooks\.example\/status|sixteen-characters/, 'the URL and the secret are never shown');
  });

  it('shows what is wrong under the field, the form kept', async () => {
    const page = await web.get(list());
    const rows: [Record<string, string>, string, RegExp][] = [
      [{ type: 'email', email: 'not an address', url: '', secret: '' }, 'email', /one email address/],
      [{ type: 'webhook', email: '', url: 'ftp://x.example', secret: '' }, 'url', /http/],
      [{ type: 'webhook', email: '', url: 'https://x.example', secret: 'short' }, 'secret', /16/],
      [{ type: 'email', email: 'GRACE@example.com', url: '', secret: '' }, 'email', /subscribed already/],
    ];
    for (const [fields, field, message] of rows) {
      const res = await web.post(list(), { _csrf: csrfOf(page.text), ...fields });
      assert.ok(res.status === 422 || res.status === 409, `${field}: ${res.status}`);
      assert.match(errorUnder(res.text, field), message);
    }
  });

  it('removes a subscriber with its button', async () => {
    const page = await web.get(list());
    const action = /action="(\/app\/status-pages\/[^"]+\/subscribers\/[^"]+\/delete)"/.exec(page.text)![1]!;
    const res = await web.post(action, { _csrf: csrfOf(page.text) });
    assert.equal(res.status, 303);
    const after = await api('GET', `/status-pages/${pageId}/subscribers`);
    assert.equal(after.body.meta.total, 1);
  });

  it('is another project’s: not found', async () => {
    const other = webClient(cp.url);
    await other.signIn(bob.email, bob.password);
    assert.equal((await other.get(list())).status, 404);
  });
});
