import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { registerSecret } from '../harness/secrets.ts';
import { webClient, type WebClient, type WebResponse } from './client.ts';
import { formFields } from './form-fields.ts';

/** The result panel of a page ("test now"), or a failure naming what the page showed instead. */
function panelOf(res: WebResponse): string {
  const start = res.text.indexOf('data-testid="test-result"');
  assert.ok(start >= 0, `a test result panel (status ${res.status})`);
  return res.text.slice(start, res.text.indexOf('</section>', start));
}

/** Each assertion row of a panel: [source, passed, observed]. */
function assertionRows(panel: string): [string, string, string][] {
  return [
    ...panel.matchAll(/data-testid="assertion" data-passed="(\w+)">\s*<td>(\w+)<\/td>[\s\S]*?<td class="observed"><code>([^<]*)<\/code>/g),
  ].map((m) => [m[2]!, m[1]!, m[3]!]);
}

/**
 * "Test now" on the monitor form: a real agent runs the check once against a real server on
 * loopback and the form comes back, as typed, with every assertion's outcome above it. Nothing
 * is saved; no agent in the region is said in the panel.
 */
describe('test now on the monitor form', () => {
  let cp: TestControlPlane;
  let agent: RunningAgent;
  let ada: TestAccount;
  let web: WebClient;
  let target: Target;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api', 'assign', 'ingest'] });
    agent = await startAgent({
      config: cp.config,
      nc: cp.nats.nc,
      log: quietLog,
      region: 'local',
      port: 0,
      checkKey: cp.cp.keys.checkCredentials,
    });
    ada = await createAccount(cp.db.sql, { email: 'ada-test-now@example.test' });
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    target = await startTarget({ status: 200, body: '{"status":"ok","count":3}', headers: { 'content-type': 'application/json' } });
  });
  after(async () => {
    await agent.stop();
    await target.close();
    await cp.stop();
  });

  async function filled(page: string, changes: Record<string, string>): Promise<Record<string, string>> {
    return { ...formFields((await web.get(page)).text, 'data-check-form'), ...changes };
  }

  const monitorCount = async () => (await cp.db.sql<{ n: number }[]>`select count(*)::int as n from monitors`)[0]!.n;

  it('tests a draft from a region and shows every assertion passed or failed with what was observed; nothing is saved', async () => {
    const before = { monitors: await monitorCount(), requests: target.requests.length };
    const res = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Draft API',
        url: `${target.url}/draft`,
        'assertion.0.source': 'json',
        'assertion.0.path': '$.count',
        'assertion.0.operator': 'equals',
        'assertion.0.target': '3',
        'assertion.1.source': 'json',
        'assertion.1.path': '$.status',
        'assertion.1.operator': 'equals',
        'assertion.1.target': 'red',
        'assertion.2.source': 'status_code',
        'assertion.2.operator': 'in',
        'assertion.2.target': '200, 204',
        test_region: 'local',
        intent: 'test',
      }),
    );
    assert.equal(res.status, 200);
    const panel = panelOf(res);
    assert.match(panel, /data-testid="verdict">Failed</);
    assert.match(panel, /<span class="tag">local<\/span>/);
    assert.match(panel, /data-testid="status-code">200</);
    assert.match(panel, /data-testid="check-error">Expected json \$\.status equals &quot;red&quot;, got &quot;ok&quot;</);
    assert.deepEqual(assertionRows(panel), [
      ['json', 'true', '3'],
      ['json', 'false', '&quot;ok&quot;'],
      ['status_code', 'true', '200'],
    ]);
    // The form is there again as typed, the region still chosen; one request, nothing stored.
    const again = formFields(res.text, 'data-check-form');
    assert.deepEqual([again.name, again['assertion.1.target'], again.test_region], ['Draft API', 'red', 'local']);
    assert.equal(target.requests.length, before.requests + 1);
    assert.equal(target.requests.at(-1)!.url, '/draft');
    assert.equal(await monitorCount(), before.monitors);
  });

  it('says in the panel that no agent of the region is connected', async () => {
    const res = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', { name: 'Far away', url: `${target.url}/mars`, test_region: 'mars', intent: 'test' }),
    );
    assert.equal(res.status, 503);
    assert.match(panelOf(res), /data-testid="test-problem">The test could not run\. No probe agent of region mars is connected\.</);
    assert.match(res.text, /name="name"[^>]*value="Far away"/, 'the form is kept, not an error page');
  });

  it('says in the panel when there were too many tests, with when to try again', async () => {
    const grace = await createAccount(cp.db.sql, { email: 'grace-test-now@example.test' });
    const other = webClient(cp.url);
    await other.signIn(grace.email, grace.password);
    const fields = {
      ...formFields((await other.get('/app/monitors/new')).text, 'data-check-form'),
      name: 'Again and again',
      url: `${target.url}/again`,
      test_region: 'mars',
      intent: 'test',
    };
    // A burst of ten goes through (each a 503: no agent there); the bucket refills slowly after it.
    let res: WebResponse | undefined;
    for (let i = 0; i < 40 && res?.status !== 429; i++) res = await other.post('/app/monitors', fields);
    assert.equal(res?.status, 429);
    assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
    assert.match(panelOf(res), /Too many tests in a short time: try again in \d+ seconds\./);
  });

  it('shows field errors instead of testing a form the API would refuse', async () => {
    const before = target.requests.length;
    const res = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', { name: 'Broken', type: 'tcp', url: `${target.url}/`, test_region: 'local', intent: 'test' }),
    );
    assert.equal(res.status, 422);
    assert.match(panelOf(res), /Correct the fields marked below to run a test\./);
    assert.match(res.text, /A tcp monitor takes a tcp:\/\/ URL\./);
    assert.equal(target.requests.length, before);
  });

  it('tests an edited monitor with the secrets it keeps, without saving the changes', async () => {
    registerSecret('k-test-now-secret');
    const created = await web.post(
      '/app/monitors',
      await filled('/app/monitors/new', {
        name: 'Saved API',
        url: `${target.url}/saved`,
        'http.headers.0.name': 'X-Api-Key',
        'http.headers.0.value': 'k-test-now-secret',
      }),
    );
    assert.equal(created.status, 303);
    const id = created.location!.split('/').at(-1)!;
    const edit = `/app/monitors/${id}/edit`;
    const res = await web.post(
      edit,
      await filled(edit, {
        url: `${target.url}/edited`,
        'assertion.0.source': 'header',
        'assertion.0.path': 'content-type',
        'assertion.0.operator': 'contains',
        'assertion.0.target': 'json',
        intent: 'test',
      }),
    );
    assert.equal(res.status, 200);
    assert.match(panelOf(res), /data-testid="verdict">OK</);
    assert.deepEqual(assertionRows(panelOf(res)), [['header', 'true', '&quot;application/json&quot;']]);
    const seen = target.requests.find((q) => q.url === '/edited');
    assert.equal(seen?.headers['x-api-key'], 'k-test-now-secret', 'the stored header value, kept by the empty field');
    const [row] = await cp.db.sql<{ url: string; n: number }[]>`
      select url, jsonb_array_length(assertions)::int as n from monitors where id = ${id}`;
    assert.deepEqual({ ...row }, { url: `${target.url}/saved`, n: 0 }, 'nothing of the test is saved');
  });
});
