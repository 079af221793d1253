import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient, type WebClient } from './client.ts';

/** The dashboard's maintenance windows page (ADR 0029): the same service and rules as the API. */
describe('dashboard: maintenance windows', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([createAccount(cp.db.sql), createAccount(cp.db.sql)]);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
  });
  after(() => cp.stop());

  const minute = (offsetMinutes: number) =>
    new Date(Math.floor(Date.now() / 60_000) * 60_000 + offsetMinutes * 60_000).toISOString().slice(0, 16);
  const windows = async () => (await api('GET', `/maintenance-windows?project_id=${ada.project_id}`)).body.data;

  it('creates a one-off window over chosen monitors, lists it in progress, edits and deletes it', async () => {
    const m = (await api('POST', '/monitors', { name: 'Checkout', url: 'https://shop.example', project_id: ada.project_id })).body.data;
    const hb = (await api('POST', '/heartbeats', { name: 'Nightly export', project_id: ada.project_id })).body.data;
    const form = await web.get('/app/maintenance/new');
    assert.equal(form.status, 200);
    assert.match(form.text, new RegExp(`<option value="${m.id}"\\s*>Checkout</option>`));
    assert.match(form.text, new RegExp(`<option value="${hb.id}"\\s*>Nightly export</option>`));

    const created = await web.submit('/app/maintenance/new', '/app/maintenance', {
      name: 'Database upgrade',
      description: 'Postgres 17',
      schedule_kind: 'one_off',
      starts_at: minute(-5),
      ends_at: minute(55),
      monitor_ids: m.id,
      active: 'on',
    });
    assert.equal(created.status, 303, created.text.slice(0, 500));
    const [w] = await windows();
    assert.deepEqual([w.name, w.kind, w.monitor_ids, w.whole_project, w.in_progress], ['Database upgrade', 'one_off', [m.id], false, true]);
    assert.equal(Date.parse(w.starts_at), Date.parse(`${minute(-5)}:00Z`));

    const page = await web.get('/app/maintenance');
    assert.match(page.text, /data-testid="in-progress"/);
    assert.match(page.text, /Database upgrade/);
    assert.match(page.text, /<td>Checkout<\/td>/);
    assert.match(page.text, /href="\/app\/maintenance"[^>]*aria-current="page"/);

    const edit = await web.get(`/app/maintenance/${w.id}/edit`);
    assert.match(edit.text, new RegExp(`value="${m.id}"\\s+selected`));
    const saved = await web.submit(`/app/maintenance/${w.id}/edit`, `/app/maintenance/${w.id}/edit`, {
      name: 'Database upgrade',
      schedule_kind: 'recurring',
      cron: '0 3 * * 6',
      duration_minutes: '90',
      timezone: 'Europe/Berlin',
      whole_project: 'on',
      active: 'on',
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 500));
    const [changed] = await windows();
    assert.deepEqual(
      [changed.kind, changed.cron, changed.duration_seconds, changed.timezone, changed.whole_project, changed.starts_at],
      ['recurring', '0 3 * * 6', 5400, 'Europe/Berlin', true, null],
    );

    const deleted = await web.submit('/app/maintenance', `/app/maintenance/${w.id}/delete`, {});
    assert.equal(deleted.status, 303);
    assert.deepEqual(await windows(), []);
  });

  it('shows what is wrong under its field and saves nothing', async () => {
    const badCron = await web.submit('/app/maintenance/new', '/app/maintenance', {
      name: 'Weekly',
      schedule_kind: 'recurring',
      cron: 'every sunday',
      duration_minutes: '60',
      timezone: 'Mars/Olympus',
      active: 'on',
    });
    assert.equal(badCron.status, 422);
    assert.match(badCron.text, /class="field invalid">\s*<label for="f-cron">/);
    assert.match(badCron.text, /class="field invalid">\s*<label for="f-timezone">/);
    assert.match(badCron.text, /value="every sunday"/, 'the form keeps what was typed');
    const backwards = await web.submit('/app/maintenance/new', '/app/maintenance', {
      name: 'Backwards',
      schedule_kind: 'one_off',
      starts_at: minute(60),
      ends_at: minute(30),
      active: 'on',
    });
    assert.equal(backwards.status, 422);
    assert.match(backwards.text, /class="field invalid">\s*<label for="f-ends_at">/);
    assert.deepEqual(
      (await windows()).filter((w: { name: string }) => w.name === 'Weekly' || w.name === 'Backwards'),
      [],
    );
  });

  it("does not show or change another tenant's window", async () => {
    const theirs = (
      await apiClient(cp.url, bob.token)('POST', '/maintenance-windows', {
        name: 'Theirs',
        project_id: bob.project_id,
        starts_at: '2030-01-01T00:00:00Z',
        ends_at: '2030-01-01T01:00:00Z',
        whole_project: true,
      })
    ).body.data;
    assert.equal((await web.get(`/app/maintenance/${theirs.id}/edit`)).status, 404);
    assert.equal((await web.submit('/app/maintenance', `/app/maintenance/${theirs.id}/delete`, {})).status, 404);
    assert.doesNotMatch((await web.get('/app/maintenance')).text, /Theirs/);
  });
});
