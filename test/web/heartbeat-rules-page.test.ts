import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';
import { csrfOf, webClient, type WebClient } from './client.ts';
import { formFields } from './form-fields.ts';

/** The text of an element's content with tags dropped and spaces folded. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

/** The log rows of a heartbeat's page whose start tag has `marker`, as text and markup. */
function logRows(page: string, marker: string): { text: string; markup: string }[] {
  return [...page.matchAll(/<tr\b[^>]*class="event[^>]*>[\s\S]*?<\/tr>/g)]
    .map((m) => m[0])
    .filter((row) => row.slice(0, row.indexOf('>')).includes(marker))
    .map((markup) => ({ markup, text: textOf(markup) }));
}

/** The dl facts of the page as term -> text. */
function facts(page: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of page.matchAll(/<dt>([\s\S]*?)<\/dt>\s*<dd[^>]*>([\s\S]*?)<\/dd>/g)) out.set(textOf(m[1]!), textOf(m[2]!));
  return out;
}

/**
 * The heartbeat's run rules on the dashboard, without JavaScript: set on the form (and kept by an
 * edit that leaves them alone), and what they did to each ping shown in the log.
 */
describe('heartbeat run rules on the dashboard', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    // A small body limit, so a body kept in part is quick to send.
    cp = await startTestControlPlane({ roles: ['api', 'deadline'], env: { PING_BODY_LIMIT: '1024' } });
    ada = await createAccount(cp.db.sql, { email: 'ada-runs@example.test' });
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const ping = async (url: string, body?: string) => {
    const res = await fetch(url.replace(cp.config.PUBLIC_URL, cp.url), { method: body === undefined ? 'GET' : 'POST', body });
    assert.equal(res.status, 200, `ping ${url}`);
  };
  const logged = (id: string, n: number) =>
    eventually(async () => (await api('GET', `/heartbeats/${id}/pings`)).body.meta?.total === n, `${n} pings logged`);

  it('creates a heartbeat with run rules from a form post, output rules from the rows filled in', async () => {
    const res = await web.submit('/app/heartbeats/new', '/app/heartbeats', {
      name: 'Hourly export',
      schedule_kind: 'period',
      period: '3600',
      timezone: 'UTC',
      grace_period: '900',
      max_duration: '1200',
      min_duration: '30',
      too_frequent_percent: '50',
      alert_after_failures: '3',
      success_exit_codes: '0, 3-5',
      'output_rules.0.match': 'regex',
      'output_rules.0.value': 'ERROR \\d+',
      'output_rules.0.outcome': 'fail',
      'output_rules.1.match': 'contains',
      'output_rules.1.value': '',
      'output_rules.1.outcome': 'fail',
      'output_rules.2.match': 'contains',
      'output_rules.2.value': ' retrying later ',
      'output_rules.2.outcome': 'success',
    });
    assert.equal(res.status, 303, res.text.slice(0, 400));
    const id = res.location!.split('/').at(-1)!;
    const hb = (await api('GET', `/heartbeats/${id}`)).body.data;
    assert.deepEqual(
      {
        max: hb.max_duration,
        min: hb.min_duration,
        ratio: hb.too_frequent_ratio,
        after: hb.alert_after_failures,
        codes: hb.success_exit_codes,
        rules: hb.output_rules,
      },
      {
        max: 1200,
        min: 30,
        ratio: 0.5,
        after: 3,
        codes: [0, 3, 4, 5],
        rules: [
          { match: 'regex', value: 'ERROR \\d+', outcome: 'fail' },
          { match: 'contains', value: ' retrying later ', outcome: 'success' },
        ],
      },
    );

    const page = await web.get(`/app/heartbeats/${id}`);
    const shown = facts(page.text);
    assert.equal(shown.get('Max duration'), '20 min');
    assert.equal(shown.get('Min duration'), '30 s');
    assert.equal(shown.get('Too frequent'), 'sooner than 50% of the interval');
    assert.equal(shown.get('Alert after'), '3 failed runs in a row');
    assert.equal(shown.get('Success exit codes'), '0, 3-5');
    assert.equal(shown.get('Output rules'), 'matches ERROR \\d+ → failed contains retrying later → success');
    assert.match(textOf(page.text), /counts as success when it is one of 0, 3-5, as a failure otherwise/);
    assert.match(page.text, /\?rid=\$RID/, 'the run id snippet');
  });

  it('keeps the run rules an edit leaves alone, exactly, and clears one emptied', async () => {
    const hb = (
      await api('POST', '/heartbeats', {
        name: 'Thirds',
        project_id: ada.project_id,
        period: 3600,
        max_duration: 600,
        too_frequent_ratio: 1 / 3,
        alert_after_failures: 2,
        success_exit_codes: [3, 0],
        output_rules: [{ match: 'contains', value: '  two spaces  ', outcome: 'fail' }],
      })
    ).body.data;
    const edit = `/app/heartbeats/${hb.id}/edit`;
    const form = await web.get(edit);
    assert.match(form.text, /<details class="form-section" data-testid="run-rules"\s+open>/, 'set rules show unfolded');
    const fields = formFields(form.text, `action="${edit}"`);
    assert.equal(fields['too_frequent_percent'], '33.3333333333');
    assert.equal(fields['success_exit_codes'], '3, 0');

    const same = await web.post(edit, { ...fields, _csrf: csrfOf(form.text) });
    assert.equal(same.status, 303, same.text.slice(0, 400));
    const kept = (await api('GET', `/heartbeats/${hb.id}`)).body.data;
    for (const key of ['max_duration', 'min_duration', 'too_frequent_ratio', 'alert_after_failures', 'success_exit_codes', 'output_rules'])
      assert.deepEqual(kept[key], hb[key], key);

    const cleared = await web.post(edit, { ...fields, max_duration: '', _csrf: csrfOf(form.text) });
    assert.equal(cleared.status, 303);
    const after = (await api('GET', `/heartbeats/${hb.id}`)).body.data;
    assert.equal(after.max_duration, null);
    assert.equal(after.too_frequent_ratio, 1 / 3);
  });

  it('shows the form again with the message under the output rule row and the rules unfolded', async () => {
    const res = await web.submit('/app/heartbeats/new', '/app/heartbeats', {
      name: 'Broken',
      schedule_kind: 'none',
      grace_period: '3600',
      'output_rules.0.value': '',
      'output_rules.1.match': 'regex',
      'output_rules.1.value': 'a[',
      'output_rules.1.outcome': 'fail',
    });
    assert.equal(res.status, 422);
    assert.match(res.text, /<details class="form-section" data-testid="run-rules"\s+open>/);
    assert.match(res.text, /id="f-output_rules\.1\.value"[^>]*value="a\["[^>]*aria-invalid="true"/, 'the row kept, marked invalid');
    assert.doesNotMatch(res.text, /id="f-output_rules\.0\.value"[^>]*aria-invalid/, 'the empty row above it is not');
    assert.equal((await web.get('/app/heartbeats')).text.includes('Broken'), false, 'nothing saved');
  });

  it('shows a run judged too short with its reason, run id and run time, the open runs and the failed runs counted', async () => {
    const hb = (
      await api('POST', '/heartbeats', {
        name: 'Quick job',
        project_id: ada.project_id,
        period: 3600,
        min_duration: 60,
        alert_after_failures: 2,
      })
    ).body.data;
    const [done, open] = [randomUUID(), randomUUID()];
    await ping(`${hb.start_url}?rid=${done}`);
    await ping(`${hb.ping_url}?rid=${done}`);
    await ping(`${hb.start_url}?rid=${open}`);
    await logged(hb.id, 3);

    const page = (await web.get(`/app/heartbeats/${hb.id}`)).text;
    const [judged, ...others] = logRows(page, 'data-outcome="fail"');
    assert.equal(others.length, 0);
    assert.match(judged!.text, new RegExp(`^\\S.* Success → failed: too short run ${done.slice(0, 8)} ran \\d+ ms GET from`));
    assert.match(judged!.markup, new RegExp(`title="Run id ${done}"`));
    assert.match(judged!.markup, /title="The run took less than the min duration\."/);
    const starts = logRows(page, 'data-event="start"');
    assert.deepEqual(
      starts.map((s) => /run (\w{8})/.exec(s.text)?.[1]),
      [open.slice(0, 8), done.slice(0, 8)],
    );

    const shown = facts(page);
    assert.equal(shown.get('Failed in a row'), '1 (it goes down at 2)');
    assert.match(shown.get('Open')!, new RegExp(`^run ${open.slice(0, 8)} , started (just now|.* ago)$`));
    assert.equal(shown.get('Min duration'), '1 min');
    assert.equal((await api('GET', `/heartbeats/${hb.id}`)).body.data.status, 'running', 'one failure of two tolerated');
  });

  it('shows a failure that an exit code makes a success, and a success its output makes a failure, and why it went down', async () => {
    const hb = (
      await api('POST', '/heartbeats', {
        name: 'Sync',
        project_id: ada.project_id,
        period: 3600,
        success_exit_codes: [0, 3],
        output_rules: [{ match: 'contains', value: 'ERROR', outcome: 'fail' }],
      })
    ).body.data;
    await ping(`${hb.ping_url}/3`);
    await ping(hb.ping_url, 'ERROR: disk full');
    await logged(hb.id, 2);
    await eventually(
      async () =>
        (await cp.db.sql`select 1 from outbox_events where kind = 'heartbeat.down' and payload #>> '{subject,id}' = ${hb.id}`).length > 0,
      'the heartbeat to go down',
    );
    const page = (await web.get(`/app/heartbeats/${hb.id}`)).text;
    assert.match(logRows(page, 'data-outcome="success"')[0]!.text, / Fail \(exit 3\) → success GET from/);
    assert.match(logRows(page, 'data-outcome="fail"')[0]!.text, / Success → failed: output rule POST from/);
    assert.match(logRows(page, 'data-event="down"')[0]!.text, /The job's output matched a rule that makes it a failure/);
    assert.equal(facts(page).get('Success exit codes'), '0, 3');
  });

  it('marks a body as truncated only when less of it was kept than was sent, counting bytes', async () => {
    const hb = (await api('POST', '/heartbeats', { name: 'Bodies', project_id: ada.project_id, period: 3600 })).body.data;
    await ping(hb.ping_url, 'é'.repeat(500)); // 1000 bytes: under the limit of 1024, kept whole
    await ping(hb.ping_url, 'x'.repeat(3000));
    await logged(hb.id, 2);
    const page = (await web.get(`/app/heartbeats/${hb.id}`)).text;
    const summaries = [...page.matchAll(/<summary>([\s\S]*?)<\/summary>/g)].map((m) => textOf(m[1]!)).filter((s) => s.startsWith('Body'));
    assert.deepEqual(summaries, ['Body, 2.9 KB (truncated)', 'Body, 1000 B']);
  });
});
