import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { patternProblem } from '../../shared/src/checks/assertions.ts';
import { escapeHtml } from '../../control-plane/src/web/html.ts';
import { webClient, type WebClient, type WebResponse } from './client.ts';

/** The messages shown under a field of a page's form. */
function errorsUnder(res: WebResponse, field: string): string[] {
  const start = res.text.indexOf(`id="f-${field}"`);
  assert.ok(start >= 0, `the page has a ${field} field`);
  const fieldStart = res.text.lastIndexOf('<div class="field', start);
  const next = res.text.indexOf('<div class="field', start);
  const block = res.text.slice(fieldStart, next < 0 ? undefined : next);
  return [...block.matchAll(/<div class="error">([^<]*)<\/div>/g)].map((m) => m[1]!);
}

/**
 * Every dashboard form answers a wrong input the same way: the form again, with the status the
 * API would give and the message under the field it is about; nothing is saved.
 */
describe('dashboard form errors', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let web: WebClient;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    ada = await createAccount(cp.db.sql, { email: 'ada-forms@example.test' });
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
  });
  after(() => cp.stop());

  const tokens = '/app/settings/tokens';
  const rows: [
    what: string,
    page: string,
    action: string,
    fields: Record<string, string>,
    status: number,
    field: string,
    message: string,
  ][] = [
    ['a token without a name', tokens, tokens, { name: '  ' }, 422, 'name', 'Give the token a name, such as where it is used.'],
    ['a token name too long', tokens, tokens, { name: 'x'.repeat(101) }, 422, 'name', 'At most 100 characters.'],
    [
      'a project renamed to nothing',
      '/app/settings/project',
      '/app/settings/project/rename',
      { name: '' },
      422,
      'name',
      'Give the project a name.',
    ],
    [
      'a new project without a name',
      '/app/settings/project',
      '/app/settings/project/new',
      { new_name: ' ', organization_id: '' },
      422,
      'new_name',
      'Give the project a name.',
    ],
    [
      'a heartbeat without a name',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: '', schedule_kind: 'none' },
      422,
      'name',
      'This field is required.',
    ],
    [
      'a heartbeat output rule with a pattern that is not one, under its own row',
      '/app/heartbeats/new',
      '/app/heartbeats',
      {
        name: 'Export',
        schedule_kind: 'none',
        'output_rules.0.value': '',
        'output_rules.1.match': 'regex',
        'output_rules.1.value': '(',
        'output_rules.1.outcome': 'fail',
      },
      422,
      'output_rules.1.value',
      escapeHtml(patternProblem('(')!),
    ],
    [
      'a heartbeat min duration not below its max duration',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: 'Export', schedule_kind: 'none', grace_period: '3600', max_duration: '300', min_duration: '300' },
      422,
      'min_duration',
      'This field must be less than the max duration (300 seconds).',
    ],
    [
      'a heartbeat min duration not below its grace period',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: 'Export', schedule_kind: 'none', grace_period: '600', min_duration: '900' },
      422,
      'min_duration',
      'This field must be less than the grace period (600 seconds).',
    ],
    [
      'a heartbeat too-frequent percentage over 100',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: 'Export', schedule_kind: 'none', too_frequent_percent: '150' },
      422,
      'too_frequent_percent',
      'Enter a percentage above 0 and at most 100, such as 50.',
    ],
    [
      'a heartbeat exit code out of range',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: 'Export', schedule_kind: 'none', success_exit_codes: '0, 300' },
      422,
      'success_exit_codes',
      '“300” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.',
    ],
    [
      'a heartbeat alert after 0 failed runs',
      '/app/heartbeats/new',
      '/app/heartbeats',
      { name: 'Export', schedule_kind: 'none', alert_after_failures: '0' },
      422,
      'alert_after_failures',
      'This field must be at least 1.',
    ],
    [
      'a trigger without a message',
      '/app/triggers/new',
      '/app/triggers',
      { name: 'Deploys', default_message: '' },
      422,
      'default_message',
      'This field is required.',
    ],
    [
      'a member who has no account',
      '/app/settings/members',
      '/app/settings/members',
      { email: 'nobody-forms@example.test' },
      422,
      'email',
      'No account uses nobody-forms@example.test. They need to sign up first.',
    ],
    [
      'a member already in the organization',
      '/app/settings/members',
      '/app/settings/members',
      { email: 'ada-forms@example.test' },
      409,
      'email',
      'ada-forms@example.test is already in this organization.',
    ],
  ];
  for (const [what, page, action, fields, status, field, message] of rows) {
    it(`shows ${what} under its field`, async () => {
      const res = await web.submit(page, action, fields);
      assert.equal(res.status, status);
      assert.deepEqual(errorsUnder(res, field), [message]);
    });
  }

  it('shows a token name taken under its field with 409, and keeps the one there is', async () => {
    assert.equal((await web.submit(tokens, tokens, { name: 'taken' })).status, 201);
    const dup = await web.submit(tokens, tokens, { name: 'taken' });
    assert.equal(dup.status, 409);
    assert.deepEqual(errorsUnder(dup, 'name'), ['An active token named &quot;taken&quot; already exists']);
    const [row] = await cp.db.sql<{ n: number }[]>`
      select count(*)::int as n from api_tokens where user_id = ${ada.user_id} and name = 'taken' and revoked_at is null`;
    assert.equal(row!.n, 1);
  });

  it('saves nothing when a form is shown again', async () => {
    const [before] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from heartbeats where project_id = ${ada.project_id}`;
    await web.submit('/app/heartbeats/new', '/app/heartbeats', { name: '', schedule_kind: 'none' });
    const [after] = await cp.db.sql<{ n: number }[]>`select count(*)::int as n from heartbeats where project_id = ${ada.project_id}`;
    assert.equal(after!.n, before!.n);
  });

  it('shows sign-in problems above the form, with the status the API would give', async () => {
    const visitor = webClient(cp.url);
    const empty = await visitor.submit('/app/sign-in', '/app/sign-in', { email: ada.email, password: '' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /<div class="flash error" role="alert">Enter your email and password\.<\/div>/);
    const wrong = await visitor.submit('/app/sign-in', '/app/sign-in', { email: ada.email, password: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /<div class="flash error" role="alert">Wrong email or password\.<\/div>/);
    assert.match(wrong.text, new RegExp(`value="${ada.email}"`), 'the email is kept');
  });
});
