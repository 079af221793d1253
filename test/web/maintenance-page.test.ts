import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { webClient, type Fields, type WebClient, type WebResponse } from './client.ts';

/** The messages shown under a field of a page's form (a group of checkboxes carries the field's id too). */
function errorsUnder(res: WebResponse, field: string): string[] {
  const start = res.text.indexOf(`id="f-${field}"`);
  assert.ok(start >= 0, `the page has a ${field} field`);
  const fieldStart = res.text.lastIndexOf('<div class="field', start);
  const next = res.text.indexOf('<div class="field', start);
  const block = res.text.slice(fieldStart, next < 0 ? undefined : next);
  return [...block.matchAll(/<div class="error">([^<]*)<\/div>/g)].map((m) => m[1]!);
}

/** The row of the maintenance list showing this window. */
function rowOf(page: string, id: string): string {
  const start = page.indexOf(`<tr id="w-${id}"`);
  assert.ok(start >= 0, `the list shows window ${id}`);
  return page.slice(start, page.indexOf('</tr>', start));
}

const list = '/app/maintenance';
const newPage = '/app/maintenance/new';

describe('dashboard maintenance windows page', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let bob: TestAccount;
  let web: WebClient;
  let api: Call;
  let checkout: string;
  let search: string;
  let backup: string;

  const windowCount = async () =>
    (await cp.db.sql<{ n: number }[]>`select count(*)::int as n from maintenance_windows where project_id = ${ada.project_id}`)[0]!.n;
  const getWindow = async (id: string) => (await api('GET', `/maintenance-windows/${id}`)).body.data;
  const createByApi = async (body: object) => {
    const res = await api('POST', '/maintenance-windows', { project_id: ada.project_id, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  };
  /** The form as a browser sends it for a one-off window on the checkout monitor; `fields` replace some. */
  const oneOff = (fields: Fields = {}): Fields => ({
    name: 'Database upgrade',
    description: '',
    schedule_kind: 'one_off',
    starts_at: '2030-07-01T22:00',
    ends_at: '2030-07-02T01:30',
    timezone: 'Europe/Berlin',
    scope: 'subjects',
    monitor_ids: [checkout],
    active: 'on',
    ...fields,
  });
  const idFromList = async (name: string) => {
    const [row] = await cp.db.sql<{ id: string }[]>`
      select id from maintenance_windows where project_id = ${ada.project_id} and name = ${name} order by created_at desc limit 1`;
    assert.ok(row, `a window named ${name}`);
    return row.id;
  };

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    [ada, bob] = await Promise.all([
      createAccount(cp.db.sql, { email: 'ada-maintenance@example.test' }),
      createAccount(cp.db.sql, { email: 'bob-maintenance@example.test' }),
    ]);
    web = webClient(cp.url);
    await web.signIn(ada.email, ada.password);
    api = apiClient(cp.url, ada.token);
    const monitor = async (name: string) =>
      (await api('POST', '/monitors', { name, url: 'https://shop.example.test/health', project_id: ada.project_id })).body.data.id;
    checkout = await monitor('Checkout API');
    search = await monitor('Search');
    backup = (await api('POST', '/heartbeats', { name: 'Nightly backup', project_id: ada.project_id, cron_schedule: '30 2 * * *' })).body
      .data.id;
  });
  after(() => cp.stop());

  it('is linked from the navigation and invites the first window while there is none', async () => {
    const overview = await web.get('/');
    assert.match(overview.text, /<a href="\/app\/maintenance"\s*>/);
    const page = await web.get(list);
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/app\/maintenance"\s+aria-current="page"/);
    assert.match(page.text, /No maintenance windows yet/);
    assert.match(page.text, /href="\/app\/maintenance\/new"/);
  });

  it("offers the project's monitors and heartbeats by name on the new window's form", async () => {
    const form = await web.get(newPage);
    assert.equal(form.status, 200);
    for (const [name, id, label] of [
      ['monitor_ids', checkout, 'Checkout API'],
      ['monitor_ids', search, 'Search'],
      ['heartbeat_ids', backup, 'Nightly backup'],
    ]) {
      assert.match(form.text, new RegExp(`name="${name}" value="${id}"\\s*/>\\s*${label}`));
    }
    assert.match(form.text, /name="schedule_kind" value="one_off"\s+checked/);
    assert.match(form.text, /name="scope" value="subjects"\s+checked/);
  });

  it('creates a one-off window, reading its start and end in the time zone given, on the monitors and heartbeats chosen', async () => {
    const res = await web.submit(newPage, list, oneOff({ name: 'Database upgrade to 17', heartbeat_ids: [backup] }));
    assert.equal(res.status, 303);
    assert.equal(res.location, list);
    const w = await getWindow(await idFromList('Database upgrade to 17'));
    assert.equal(w.kind, 'one_off');
    assert.equal(w.starts_at, '2030-07-01T20:00:00.000000Z', '22:00 in Berlin in summer is 20:00 UTC');
    assert.equal(w.ends_at, '2030-07-01T23:30:00.000000Z');
    assert.equal(w.timezone, 'Europe/Berlin');
    assert.equal(w.cron, null);
    assert.equal(w.whole_project, false);
    assert.deepEqual(w.monitor_ids, [checkout]);
    assert.deepEqual(w.heartbeat_ids, [backup]);
    assert.equal(w.active, true);

    const page = await web.get(list);
    assert.match(page.text, /Maintenance window “Database upgrade to 17” created\./);
    const row = rowOf(page.text, w.id);
    assert.match(row, /Scheduled/);
    assert.match(
      row,
      />2030-07-01 22:00<\/time><\/span> to <span class="nowrap"><time[^>]*>2030-07-02 01:30<\/time><\/span>\s*<div class="faint">once, Europe\/Berlin<\/div>/,
    );
    assert.match(row, new RegExp(`Monitors: <a href="/app/monitors/${checkout}">Checkout API</a>`));
    assert.match(row, new RegExp(`Heartbeats: <a href="/app/heartbeats/${backup}">Nightly backup</a>`));
    assert.doesNotMatch(row, /Search/);
    assert.match(row, /next <span class="nowrap"><time datetime="2030-07-01T20:00:00\.000000Z"/);
  });

  it('creates a recurring window over the whole project, and lists its cron, duration, zone and next start', async () => {
    const res = await web.submit(newPage, list, {
      name: 'Sunday patching',
      schedule_kind: 'recurring',
      // What the other kind's fields hold is not sent on: the kind chosen decides.
      starts_at: '2030-07-01T22:00',
      cron: '0 3 * * 0',
      duration_seconds: '7200',
      timezone: 'Europe/Berlin',
      scope: 'project',
      monitor_ids: [checkout],
      active: 'on',
    });
    assert.equal(res.status, 303);
    const w = await getWindow(await idFromList('Sunday patching'));
    assert.equal(w.kind, 'recurring');
    assert.equal(w.starts_at, null);
    assert.equal(w.cron, '0 3 * * 0');
    assert.equal(w.duration_seconds, 7200);
    assert.equal(w.whole_project, true);
    assert.deepEqual(w.monitor_ids, [], 'the whole project names no monitor');
    assert.ok(w.current_or_next, 'a run is ahead');

    const row = rowOf((await web.get(list)).text, w.id);
    assert.match(row, /<code>0 3 \* \* 0<\/code> for 2 h\s*<div class="faint">recurring, Europe\/Berlin<\/div>/);
    assert.match(row, /The whole project/);
    const next = w.in_progress ? 'until' : 'next';
    const at = w.in_progress ? w.current_or_next.ends_at : w.current_or_next.starts_at;
    assert.match(row, new RegExp(`${next} <span class="nowrap"><time datetime="${at}"[^>]*>[0-9-]+ 0[35]:00</time>`));
    // It covers everything: the tests below each choose what their windows cover.
    assert.equal((await api('DELETE', `/maintenance-windows/${w.id}`)).status, 204);
  });

  it('shows a window running now, and the pages of what it covers say so; the next one ahead is mentioned too', async () => {
    const now = Date.now();
    const running = await createByApi({
      name: 'Load balancer swap',
      starts_at: new Date(now - 3_600_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
      monitor_ids: [search],
    });
    const ahead = await createByApi({
      name: 'Backup host move',
      starts_at: new Date(now + 2 * 86_400_000).toISOString(),
      ends_at: new Date(now + 2 * 86_400_000 + 1_800_000).toISOString(),
      heartbeat_ids: [backup],
      timezone: 'Asia/Tokyo',
    });
    const row = rowOf((await web.get(list)).text, running.id);
    assert.match(row, /In progress/);
    assert.match(row, new RegExp(`until <span class="nowrap"><time datetime="${running.ends_at}"`));

    const monitorPage = await web.get(`/app/monitors/${search}`);
    assert.match(
      monitorPage.text,
      new RegExp(
        `data-testid="maintenance">\\s*<span class="pill late">In maintenance</span> until <span class="nowrap"><time datetime="${running.ends_at}"[^>]*>[^<]*UTC</time></span>\\s*\\(<a href="/app/maintenance#w-${running.id}">Load balancer swap</a>\\)`,
      ),
    );
    const heartbeatPage = await web.get(`/app/heartbeats/${backup}`);
    // The window created through the form earlier (2030) is further ahead than this one.
    assert.match(
      heartbeatPage.text,
      new RegExp(
        `data-testid="maintenance">\\s*Next maintenance: <span class="nowrap"><time datetime="${ahead.starts_at}"[^>]*>[^<]*Asia/Tokyo</time></span> to <span class="nowrap"><time datetime="${ahead.ends_at}"`,
      ),
    );
    assert.match(heartbeatPage.text, /Backup host move<\/a>/);
  });

  it('says nothing on the page of a monitor no window covers', async () => {
    const other = (await api('POST', '/monitors', { name: 'Docs', url: 'https://docs.example.test', project_id: ada.project_id })).body.data
      .id;
    const page = await web.get(`/app/monitors/${other}`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /data-testid="maintenance"/);
  });

  it('edits a window: its form shows the times in its zone, and a one-off window becomes a recurring one on other subjects', async () => {
    const w = await createByApi({
      name: 'Certificate renewal',
      starts_at: '2031-01-15T06:00:00Z',
      ends_at: '2031-01-15T07:00:00Z',
      timezone: 'America/New_York',
      monitor_ids: [checkout],
    });
    const edit = `/app/maintenance/${w.id}/edit`;
    const form = await web.get(edit);
    assert.equal(form.status, 200);
    assert.match(
      form.text,
      /name="starts_at"\s+type="datetime-local"\s+value="2031-01-15T01:00"/,
      '06:00 UTC is 01:00 in New York in winter',
    );
    assert.match(form.text, new RegExp(`name="monitor_ids" value="${checkout}"\\s+checked`));
    assert.doesNotMatch(form.text, new RegExp(`name="monitor_ids" value="${search}"\\s+checked`));

    const res = await web.submit(edit, edit, {
      name: 'Certificate renewal, monthly',
      schedule_kind: 'recurring',
      cron: '0 4 1 * *',
      duration_seconds: '1800',
      timezone: 'America/New_York',
      scope: 'subjects',
      monitor_ids: [search],
      heartbeat_ids: [backup],
      active: 'on',
    });
    assert.equal(res.status, 303);
    const after = await getWindow(w.id);
    assert.equal(after.name, 'Certificate renewal, monthly');
    assert.equal(after.kind, 'recurring');
    assert.equal(after.starts_at, null);
    assert.equal(after.ends_at, null);
    assert.equal(after.cron, '0 4 1 * *');
    assert.equal(after.duration_seconds, 1800);
    assert.deepEqual(after.monitor_ids, [search]);
    assert.deepEqual(after.heartbeat_ids, [backup]);
  });

  it('pauses a window when Active is unchecked, and the list says so', async () => {
    const w = await createByApi({ name: 'Paused one', cron: '0 1 * * *', duration_seconds: 600, whole_project: true });
    const edit = `/app/maintenance/${w.id}/edit`;
    const res = await web.submit(edit, edit, {
      name: 'Paused one',
      schedule_kind: 'recurring',
      cron: '0 1 * * *',
      duration_seconds: '600',
      timezone: 'UTC',
      scope: 'project',
    });
    assert.equal(res.status, 303);
    assert.equal((await getWindow(w.id)).active, false);
    assert.match(rowOf((await web.get(list)).text, w.id), /<span class="pill paused">Paused<\/span>/);
  });

  const bad: [what: string, fields: () => Fields, field: string, message: string | RegExp][] = [
    ['a window without a name', () => oneOff({ name: ' ' }), 'name', 'This field is required.'],
    ['an end before the start', () => oneOff({ ends_at: '2030-07-01T21:00' }), 'ends_at', 'This field must be after starts_at.'],
    [
      'a one-off window longer than 31 days',
      () => oneOff({ ends_at: '2030-08-15T22:00' }),
      'ends_at',
      'A one-off window lasts 31 days at most.',
    ],
    ['a one-off window without a start', () => oneOff({ starts_at: '' }), 'starts_at', 'Enter when the window starts.'],
    [
      'a start that is not a date and time',
      () => oneOff({ starts_at: 'tomorrow' }),
      'starts_at',
      'Enter a date and a time, such as 2030-01-31T22:00.',
    ],
    [
      'a start on a day that does not exist',
      () => oneOff({ starts_at: '2030-02-30T10:00' }),
      'starts_at',
      'Enter a date and a time, such as 2030-01-31T22:00.',
    ],
    [
      'a start before 2000',
      () => oneOff({ starts_at: '1999-12-31T10:00' }),
      'starts_at',
      /^This field must be between 2000-01-01T00:00:00Z and /,
    ],
    [
      'an unknown time zone',
      () => oneOff({ timezone: 'Mars/Olympus_Mons' }),
      'timezone',
      'This field must be a valid IANA time zone, such as Europe/Berlin.',
    ],
    [
      'a cron expression out of range',
      () => oneOff({ schedule_kind: 'recurring', cron: '61 * * * *', duration_seconds: '600' }),
      'cron',
      /^This field is not a valid cron expression: .+\.$/,
    ],
    [
      'a recurring window without a cron expression',
      () => oneOff({ schedule_kind: 'recurring', cron: '', duration_seconds: '600' }),
      'cron',
      'Enter a cron expression, such as 0 3 * * 0.',
    ],
    [
      'a duration under a minute',
      () => oneOff({ schedule_kind: 'recurring', cron: '0 3 * * *', duration_seconds: '30' }),
      'duration_seconds',
      'This field must be at least 60.',
    ],
    [
      'a duration that is not a number',
      () => oneOff({ schedule_kind: 'recurring', cron: '0 3 * * *', duration_seconds: 'two hours' }),
      'duration_seconds',
      'This field must be an integer.',
    ],
    [
      'nothing chosen to cover',
      () => oneOff({ monitor_ids: [], heartbeat_ids: [] }),
      'monitor_ids',
      'Choose at least one monitor or heartbeat, or the whole project.',
    ],
    ['a monitor id that is not one', () => oneOff({ monitor_ids: ['not-an-id'] }), 'monitor_ids', 'This field must be a valid UUID.'],
  ];
  for (const [what, fields, field, message] of bad) {
    it(`shows ${what} under its field with 422, keeps what was typed, and saves nothing`, async () => {
      const before = await windowCount();
      const res = await web.submit(newPage, list, fields());
      assert.equal(res.status, 422);
      const shown = errorsUnder(res, field);
      assert.equal(shown.length, 1, `${field}: ${JSON.stringify(shown)}`);
      if (typeof message === 'string') assert.equal(shown[0], message);
      else assert.match(shown[0]!, message);
      const name = String(fields().name).trim();
      assert.match(res.text, new RegExp(`name="name"\\s+type="text"\\s+value="${name}"`), 'the name typed is kept');
      assert.equal(await windowCount(), before);
    });
  }

  it("refuses another project's monitor with the service's message, as the API does", async () => {
    const bobs = (
      await apiClient(cp.url, bob.token)('POST', '/monitors', { name: 'Bob', url: 'https://b.example', project_id: bob.project_id })
    ).body.data.id;
    const before = await windowCount();
    const res = await web.submit(newPage, list, oneOff({ monitor_ids: [bobs] }));
    assert.equal(res.status, 422);
    assert.deepEqual(errorsUnder(res, 'monitor_ids'), [`Not monitors of this project: ${bobs}.`]);
    assert.equal(await windowCount(), before);
  });

  it('shows bad input on the edit form too, and leaves the window as it was', async () => {
    const w = await createByApi({ name: 'Untouched', cron: '0 2 * * *', duration_seconds: 900, whole_project: true });
    const edit = `/app/maintenance/${w.id}/edit`;
    const res = await web.submit(edit, edit, {
      name: 'Changed',
      schedule_kind: 'recurring',
      cron: '0 2 * *',
      duration_seconds: '900',
      timezone: 'UTC',
      scope: 'project',
      active: 'on',
    });
    assert.equal(res.status, 422);
    assert.match(errorsUnder(res, 'cron')[0]!, /not a valid cron expression: expected 5 fields/);
    assert.match(res.text, /value="Changed"/);
    const after = await getWindow(w.id);
    assert.equal(after.name, 'Untouched');
    assert.equal(after.cron, '0 2 * * *');
  });

  it('deletes a window from the list', async () => {
    const w = await createByApi({ name: 'To delete', cron: '0 5 * * *', duration_seconds: 600, whole_project: true });
    const res = await web.submit(list, `/app/maintenance/${w.id}/delete`, {});
    assert.equal(res.status, 303);
    assert.equal(res.location, list);
    assert.equal((await api('GET', `/maintenance-windows/${w.id}`)).status, 404);
    const page = await web.get(list);
    assert.match(page.text, /Maintenance window “To delete” deleted\./);
    assert.doesNotMatch(page.text, new RegExp(`w-${w.id}`));
  });

  it("answers another tenant's window with a 404 page and leaves it alone", async () => {
    const w = await createByApi({ name: 'Ada only', cron: '0 6 * * *', duration_seconds: 600, whole_project: true });
    const intruder = webClient(cp.url);
    await intruder.signIn(bob.email, bob.password);
    assert.equal((await intruder.get(`/app/maintenance/${w.id}/edit`)).status, 404);
    const del = await intruder.submit(list, `/app/maintenance/${w.id}/delete`, {});
    assert.equal(del.status, 404);
    assert.equal(del.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal((await getWindow(w.id)).name, 'Ada only');
    assert.doesNotMatch((await intruder.get(list)).text, /Ada only/);
  });

  it('refuses a form without its CSRF token', async () => {
    const before = await windowCount();
    const res = await web.post(list, oneOff());
    assert.equal(res.status, 403);
    assert.equal(await windowCount(), before);
  });
});
