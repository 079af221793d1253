import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { escapeHtml } from '../../control-plane/src/web/html.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { webClient, type WebClient } from './client.ts';

const secretPath = '/services/T0/B0/web-slack-token-99';

/** The text of the first element with this data-testid, entities decoded as a browser would. */
function testIdText(page: string, id: string): string | undefined {
  const m = new RegExp(`data-testid="${id}"[^>]*>([\\s\\S]*?)</`).exec(page);
  if (!m) return undefined;
  return m[1]!
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');
}

describe('the message page of an integration', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;
  let api: Call;
  let sink: Target;
  let id: string;
  let page: string;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql, { email: 'ada@example.test' });
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    id = (
      await api('POST', '/integrations', {
        project_id: ada.project_id,
        name: 'Ops chat',
        type: 'slack',
        config: { url: `${sink.url}${secretPath}` },
      })
    ).body.data.id;
    page = `/app/integrations/${id}/message`;
  });
  after(async () => {
    await sink.close();
    await cp.stop();
  });

  it('shows the template fields on the new-integration form and saves a template with the integration', async () => {
    const form = await web.get('/app/integrations/new?type=ntfy');
    assert.match(form.text, /name="template\.title"/);
    assert.match(form.text, /name="template\.body"/);
    assert.match(form.text, /\{\{acknowledge_url\}\}/, 'the variables are listed');
    const bad = await web.submit('/app/integrations/new?type=ntfy', '/app/integrations?type=ntfy', {
      name: 'Phone',
      'config.topic': 'ops',
      'template.body': 'Down: {{password}}',
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /uses an unknown variable \{\{password\}\}/);
    const created = await web.submit('/app/integrations/new?type=ntfy', '/app/integrations?type=ntfy', {
      name: 'Phone',
      'config.topic': 'ops',
      'template.title': '{{subject.name}} is {{status}}',
      'template.body': '',
    });
    assert.equal(created.status, 303);
    const newId = /\/app\/integrations\/([0-9a-f-]{36})$/.exec(created.location!)![1]!;
    assert.deepEqual((await api('GET', `/integrations/${newId}`)).body.data.template, { title: '{{subject.name}} is {{status}}' });
    const detail = await web.get(created.location!);
    assert.match(detail.text, /\{\{subject\.name\}\} is \{\{status\}\}/);
    assert.match(detail.text, new RegExp(`href="/app/integrations/${newId}/message"`));
  });

  it('previews the exact request of a sample outage, with its buttons and without the secret URL, under a strict CSP', async () => {
    const res = await web.get(page);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy')!, /script-src 'self'/);
    assert.doesNotMatch(res.text, /<script>|\son[a-z]+="|style="/i, 'no inline script or style');
    assert.ok(!res.text.includes('web-slack-token-99'), 'the secret URL is not shown');
    assert.match(res.text, new RegExp(`POST ${sink.url.replace(/\./g, '\\.')}/\\[redacted\\]`));
    const body = JSON.parse(testIdText(res.text, 'payload-raw')!);
    assert.equal(body.blocks[0].text.text, '🔴 Monitor Sample monitor is down');
    assert.ok(body.blocks.some((b: { type: string }) => b.type === 'actions'));
    assert.equal(sink.requests.length, 0, 'a preview sends nothing');
  });

  it('previews an unsaved template without saving it, and shows a wrong one under its field', async () => {
    const shown = await web.submit(page, `${page}/preview`, {
      'template.title': 'Alert <{{subject.name}}>',
      'template.body': '{{cause}} in {{regions}}',
      event: 'monitor.down',
    });
    assert.equal(shown.status, 200);
    const body = JSON.parse(testIdText(shown.text, 'payload-raw')!);
    assert.equal(body.blocks[0].text.text, '🔴 Alert <Sample monitor>');
    assert.equal(body.blocks[1].text.text, 'HTTP 503 (expected 200-299) in eu-west, us-east');
    assert.match(shown.text, /value="Alert &lt;\{\{subject\.name\}\}&gt;"/, 'the form keeps what was typed');
    assert.equal((await api('GET', `/integrations/${id}`)).body.data.template, null);

    const wrong = await web.submit(page, `${page}/preview`, { 'template.body': 'x }} y' });
    assert.equal(wrong.status, 422);
    assert.match(wrong.text, /class="field invalid"[\s\S]*without its \{\{ at character 3/);
  });

  it('sends a test with the typed template and shows exactly what the receiver got', async () => {
    const res = await web.submit(page, `${page}/test`, { 'template.body': 'Test of {{subject.name}}', event: 'integration.test' });
    assert.equal(res.status, 200);
    const [got] = await sink.waitForRequests(1);
    assert.equal(got!.url, secretPath);
    assert.match(res.text, /What was sent/);
    assert.match(res.text, /Delivered in \d+ ms/);
    assert.equal(testIdText(res.text, 'payload-raw'), got!.body);
    assert.equal(JSON.parse(got!.body).blocks[1].text.text, 'Test of Ops chat');
    assert.ok(!res.text.includes('web-slack-token-99'));
  });

  it('saves the template, then clears it when both fields are emptied', async () => {
    const saved = await web.submit(page, page, { 'template.title': '{{subject.name}} down', 'template.body': '{{message}}' });
    assert.equal(saved.status, 303);
    assert.equal(saved.location, page);
    assert.deepEqual((await api('GET', `/integrations/${id}`)).body.data.template, { title: '{{subject.name}} down', body: '{{message}}' });
    const after = await web.get(page);
    assert.match(after.text, /Message saved/);
    assert.match(after.text, new RegExp(escapeHtml('{{subject.name}} down').replace(/[{}.]/g, '\\$&')));
    assert.equal(JSON.parse(testIdText(after.text, 'payload-raw')!).blocks[0].text.text, '🔴 Sample monitor down');
    const cleared = await web.submit(page, page, { 'template.title': '', 'template.body': '' });
    assert.equal(cleared.status, 303);
    assert.equal((await api('GET', `/integrations/${id}`)).body.data.template, null);
  });
});
