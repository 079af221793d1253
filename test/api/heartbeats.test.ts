import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { nextCronOccurrence, validateCron } from '../../control-plane/src/heartbeats/schedule.ts';
import { apiClient, timestampFormat as TIMESTAMP, type ApiResponse } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';

const PING_BASE = 'https://ping.example.test';

// 255 and 256 characters, both valid cron expressions.
const MINUTES = Array.from({ length: 60 }, (_, i) => i).join(',');
const HOURS = Array.from({ length: 24 }, (_, i) => i).join(',');
const CRON_255 = `${MINUTES} ${HOURS} 1,2,3,4,5,6,7,8,9 1,2 *`;
const CRON_256 = `${MINUTES} ${HOURS} 1,2,3,4,5,6,7,8,9,10 * *`;

/** A 422 naming exactly this field, with exactly this message. */
function assertInvalid(res: ApiResponse, field: string, message: string): void {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.deepEqual(res.body, { message, errors: { [field]: [message] } });
}

describe('heartbeats API', () => {
  let cp: TestControlPlane;
  let alice: TestAccount;
  let bob: TestAccount;

  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { PING_BASE_URL: `${PING_BASE}/` } });
    alice = await createAccount(cp.db.sql);
    bob = await createAccount(cp.db.sql);
  });
  after(() => cp.stop());

  const call = (who: TestAccount | null, method: string, path: string, body?: unknown) => apiClient(cp.url, who?.token)(method, path, body);

  const create = (body: Record<string, unknown>, who: TestAccount = alice) =>
    call(who, 'POST', '/heartbeats', { name: 'Nightly backup', project_id: who.project_id, ...body });

  async function created(body: Record<string, unknown> = {}, who: TestAccount = alice) {
    const res = await create(body, who);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  }

  async function integrationOf(projectId: string): Promise<string> {
    const [row] = await cp.db.sql<{ id: string }[]>`
      insert into integrations (project_id, name, type) values (${projectId}, 'Ops webhook', 'webhook') returning id`;
    return row!.id;
  }

  describe('creating', () => {
    it('creates a heartbeat with the spec defaults and answers 201 with the create envelope', async () => {
      const before = Date.now();
      const res = await create({});
      assert.equal(res.status, 201);
      assert.equal(res.body.message, 'Heartbeat created successfully');
      const hb = res.body.data;
      assert.match(hb.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        {
          ...hb,
          id: undefined,
          created_at: undefined,
          updated_at: undefined,
          ping_url: undefined,
          start_url: undefined,
          fail_url: undefined,
          snooze_url: undefined,
        },
        {
          id: undefined,
          name: 'Nightly backup',
          project_id: alice.project_id,
          grace_period: 3600,
          cron_schedule: null,
          next_ping_at: null,
          created_at: undefined,
          updated_at: undefined,
          ping_url: undefined,
          start_url: undefined,
          fail_url: undefined,
          project: { id: alice.project_id, name: 'Default', description: '' },
          status: 'new',
          last_ping_at: null,
          period: null,
          timezone: 'UTC',
          active: true,
          integration_ids: [],
          depends_on: [],
          max_duration: null,
          min_duration: null,
          too_frequent_ratio: null,
          alert_after_failures: 1,
          success_exit_codes: [0],
          output_rules: [],
          last_success_at: null,
          failed_runs: 0,
          running: [],
          snoozed_until: null,
          snooze_url: undefined,
        },
      );
      assert.match(hb.snooze_url, new RegExp(`^${PING_BASE}/heartbeat/${hb.id}/snooze\\?sig=[A-Za-z0-9_-]{43}$`));
      assert.match(hb.created_at, TIMESTAMP);
      assert.match(hb.updated_at, TIMESTAMP);
      assert.ok(Date.parse(hb.created_at) >= before - 1000);
    });

    it('builds the ping, start and fail URLs from PING_BASE_URL and the heartbeat id', async () => {
      const hb = await created();
      assert.equal(hb.ping_url, `${PING_BASE}/heartbeat/${hb.id}`);
      assert.equal(hb.start_url, `${PING_BASE}/heartbeat/${hb.id}/start`);
      assert.equal(hb.fail_url, `${PING_BASE}/heartbeat/${hb.id}/fail`);
    });

    it('computes next_ping_at as the first cron occurrence after now, in the heartbeat time zone', async () => {
      const before = new Date();
      const hb = await created({ cron_schedule: '30 4 * * *', timezone: 'America/New_York' });
      const after = new Date();
      const expected = [before, after].map((at) =>
        nextCronOccurrence('30 4 * * *', 'America/New_York', at)!.toISOString().replace('Z', '000Z'),
      );
      assert.ok(expected.includes(hb.next_ping_at), `${hb.next_ping_at} not in ${expected.join(', ')}`);
      assert.match(hb.next_ping_at, /T(08|09):30:00\.000000Z$/);
      assert.equal(hb.cron_schedule, '30 4 * * *');
      assert.equal(hb.timezone, 'America/New_York');
    });

    it('stores a shorthand as sent, trimmed, and computes next_ping_at from it in the time zone', async () => {
      const before = new Date();
      const hb = await created({ cron_schedule: '  @Daily\n', timezone: 'Asia/Kolkata' });
      const after = new Date();
      const expected = [before, after].map((at) => nextCronOccurrence('@daily', 'Asia/Kolkata', at)!.toISOString().replace('Z', '000Z'));
      assert.ok(expected.includes(hb.next_ping_at), `${hb.next_ping_at} not in ${expected.join(', ')}`);
      assert.match(hb.next_ping_at, /T18:30:00\.000000Z$/);
      assert.equal(hb.cron_schedule, '@Daily');
      const read = await call(alice, 'GET', `/heartbeats/${hb.id}`);
      assert.equal(read.body.data.cron_schedule, '@Daily');
    });

    it('computes next_ping_at as now + period when there is a period and no cron schedule', async () => {
      const before = Date.now();
      const hb = await created({ period: 600 });
      const after = Date.now();
      const due = Date.parse(hb.next_ping_at);
      assert.ok(due >= before + 600_000 && due <= after + 600_000, hb.next_ping_at);
      assert.equal(hb.period, 600);
    });

    it('lets the cron schedule win over the period', async () => {
      const hb = await created({ cron_schedule: '0 0 1 1 *', period: 60 });
      assert.match(hb.next_ping_at, /-01-01T00:00:00\.000000Z$/);
    });

    it('keeps an explicit next_ping_at over the schedule', async () => {
      const hb = await created({ cron_schedule: '* * * * *', next_ping_at: '2030-01-01T00:00:00Z' });
      assert.equal(hb.next_ping_at, '2030-01-01T00:00:00.000000Z');
    });

    it('accepts next_ping_at with fractional seconds and keeps the microseconds', async () => {
      const hb = await created({ next_ping_at: '2030-01-01T00:00:00.123456Z' });
      assert.equal(hb.next_ping_at, '2030-01-01T00:00:00.123456Z');
    });

    it('accepts next_ping_at with an offset and answers it in UTC', async () => {
      const hb = await created({ next_ping_at: '2030-06-01T12:00:00.5+02:00' });
      assert.equal(hb.next_ping_at, '2030-06-01T10:00:00.500000Z');
    });

    it('treats a null next_ping_at on create like a missing one', async () => {
      const hb = await created({ next_ping_at: null, period: 3600 });
      assert.match(hb.next_ping_at, TIMESTAMP);
    });

    it('creates a paused heartbeat when active is false', async () => {
      const hb = await created({ active: false, period: 60 });
      assert.equal(hb.active, false);
      assert.equal(hb.status, 'paused');
    });

    it('reads late when next_ping_at has passed and grace has not', async () => {
      const hb = await created({ next_ping_at: new Date(Date.now() - 10_000).toISOString(), grace_period: 3600 });
      assert.equal(hb.status, 'late');
    });

    it('reads down when next_ping_at plus grace has passed', async () => {
      const hb = await created({ next_ping_at: new Date(Date.now() - 7_200_000).toISOString(), grace_period: 60 });
      assert.equal(hb.status, 'down');
    });

    it('canonicalizes the time zone name', async () => {
      const hb = await created({ timezone: 'europe/berlin', cron_schedule: '0 3 * * *' });
      assert.equal(hb.timezone, 'Europe/Berlin');
    });

    it('accepts grace_period 60 and 86400, the bounds', async () => {
      assert.equal((await created({ grace_period: 60 })).grace_period, 60);
      assert.equal((await created({ grace_period: 86_400 })).grace_period, 86_400);
    });

    it('accepts a name of 255 characters', async () => {
      assert.equal((await created({ name: 'n'.repeat(255) })).name, 'n'.repeat(255));
    });

    it('accepts a cron_schedule of 255 characters', async () => {
      assert.equal(CRON_255.length, 255);
      assert.equal((await created({ cron_schedule: CRON_255 })).cron_schedule, CRON_255);
    });

    it('accepts period 60 and 31536000, the bounds', async () => {
      assert.equal((await created({ period: 60 })).period, 60);
      assert.equal((await created({ period: 31_536_000 })).period, 31_536_000);
    });

    it('links integrations of the same project', async () => {
      const first = await integrationOf(alice.project_id);
      const second = await integrationOf(alice.project_id);
      const hb = await created({ integration_ids: [first, second, first] });
      assert.deepEqual(hb.integration_ids, [first, second].sort());
    });
  });

  describe('validating a create', () => {
    it('requires name and project_id', async () => {
      const res = await call(alice, 'POST', '/heartbeats', {});
      assert.equal(res.status, 422);
      assert.deepEqual(res.body, {
        message: 'The name field is required. (and 1 more error)',
        errors: { name: ['The name field is required.'], project_id: ['The project_id field is required.'] },
      });
    });

    it('refuses a blank name', async () => {
      assertInvalid(await create({ name: '   ' }), 'name', 'The name field is required.');
    });

    it('refuses a name of 256 characters', async () => {
      assertInvalid(await create({ name: 'n'.repeat(256) }), 'name', 'The name field must not be greater than 255 characters.');
    });

    it('refuses a name that is not a string', async () => {
      assertInvalid(await create({ name: 42 }), 'name', 'The name field must be a string.');
    });

    it('refuses a project_id that is not a uuid', async () => {
      assertInvalid(await create({ project_id: 'abc' }), 'project_id', 'The project_id field must be a valid UUID.');
    });

    it('refuses grace_period 59 and 86401, one past each bound', async () => {
      assertInvalid(await create({ grace_period: 59 }), 'grace_period', 'The grace_period field must be at least 60.');
      assertInvalid(await create({ grace_period: 86_401 }), 'grace_period', 'The grace_period field must not be greater than 86400.');
    });

    it('refuses a grace_period that is not an integer', async () => {
      assertInvalid(await create({ grace_period: 60.5 }), 'grace_period', 'The grace_period field must be an integer.');
      assertInvalid(await create({ grace_period: '3600' }), 'grace_period', 'The grace_period field must be an integer.');
      assertInvalid(await create({ grace_period: null }), 'grace_period', 'The grace_period field must not be null.');
    });

    it('refuses a cron_schedule of 256 characters', async () => {
      assert.equal(CRON_256.length, 256);
      assertInvalid(
        await create({ cron_schedule: CRON_256 }),
        'cron_schedule',
        'The cron_schedule field must not be greater than 255 characters.',
      );
    });

    for (const expr of ['61 * * * *', '* * *', '', '* * * * * *', '0 0 31 2 *', '@reboot', '@minutely', '@daily 5']) {
      it(`refuses the cron_schedule ${JSON.stringify(expr)} with the reason`, async () => {
        const reason = validateCron(expr);
        assert.ok(reason);
        assertInvalid(
          await create({ cron_schedule: expr }),
          'cron_schedule',
          `The cron_schedule field is not a valid cron expression: ${reason}.`,
        );
      });
    }

    it('names the field at fault in a cron error', async () => {
      const res = await create({ cron_schedule: '61 * * * *' });
      assert.match(res.body.errors.cron_schedule[0], /minute field "61"/);
    });

    it('refuses a cron_schedule that is not a string', async () => {
      assertInvalid(await create({ cron_schedule: 5 }), 'cron_schedule', 'The cron_schedule field must be a string.');
    });

    it('refuses period 59 and 31536001, one past each bound', async () => {
      assertInvalid(await create({ period: 59 }), 'period', 'The period field must be at least 60.');
      assertInvalid(await create({ period: 31_536_001 }), 'period', 'The period field must not be greater than 31536000.');
    });

    it('refuses an unknown time zone', async () => {
      assertInvalid(
        await create({ timezone: 'Mars/Olympus' }),
        'timezone',
        'The timezone field must be a valid IANA time zone, such as Europe/Berlin.',
      );
      assertInvalid(await create({ timezone: '' }), 'timezone', 'The timezone field is required.');
    });

    it('refuses a next_ping_at that is not an ISO 8601 date-time with a zone', async () => {
      const message = 'The next_ping_at field must be a valid ISO 8601 date-time.';
      for (const value of ['tomorrow', '2030-01-01', '2030-01-01T00:00:00', '2030-02-30T00:00:00Z']) {
        assertInvalid(await create({ next_ping_at: value }), 'next_ping_at', message);
      }
    });

    it('accepts next_ping_at from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z and refuses one past either end', async () => {
      assert.equal((await created({ next_ping_at: '1970-01-01T00:00:00Z' })).next_ping_at, '1970-01-01T00:00:00.000000Z');
      assert.equal((await created({ next_ping_at: '9999-12-31T23:59:59Z' })).next_ping_at, '9999-12-31T23:59:59.000000Z');
      const message = 'The next_ping_at field must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z.';
      for (const value of [
        '1969-12-31T23:59:59.999999Z',
        '9999-12-31T23:59:59.999Z',
        '9999-12-31T23:00:00-05:00',
        '0000-01-01T00:00:00Z',
      ]) {
        assertInvalid(await create({ next_ping_at: value }), 'next_ping_at', message);
      }
    });

    it('refuses a name containing a NUL character', async () => {
      assertInvalid(await create({ name: 'a\u0000b' }), 'name', 'The name field must not contain NUL characters.');
    });

    it('refuses an active that is not a boolean', async () => {
      assertInvalid(await create({ active: 'yes' }), 'active', 'The active field must be true or false.');
    });

    it('refuses integration_ids of another project, by position', async () => {
      const own = await integrationOf(alice.project_id);
      const foreign = await integrationOf(bob.project_id);
      const res = await create({ integration_ids: [own, foreign, randomUUID()] });
      assert.equal(res.status, 422);
      assert.deepEqual(res.body, {
        message: 'The selected integration_ids.1 is invalid.',
        errors: {
          'integration_ids.1': ['The selected integration_ids.1 is invalid.'],
          'integration_ids.2': ['The selected integration_ids.2 is invalid.'],
        },
      });
    });

    it('refuses integration_ids that are not uuids', async () => {
      assertInvalid(await create({ integration_ids: ['x'] }), 'integration_ids.0', 'The integration_ids.0 field must be a valid UUID.');
    });

    it('answers 400 to a body that is not JSON', async () => {
      const res = await fetch(`${cp.url}/heartbeats`, {
        method: 'POST',
        headers: { authorization: alice.auth, 'content-type': 'application/json' },
        body: '{"name":',
      });
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { message: 'Malformed JSON body' });
    });
  });

  describe('reading', () => {
    it('answers a heartbeat in the data envelope', async () => {
      const hb = await created({ cron_schedule: '*/5 * * * *' });
      const res = await call(alice, 'GET', `/heartbeats/${hb.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: hb });
    });

    it('answers 404 for an unknown id', async () => {
      const res = await call(alice, 'GET', `/heartbeats/${randomUUID()}`);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { message: 'Not found' });
    });

    it('answers 404 for a malformed id', async () => {
      const res = await call(alice, 'GET', '/heartbeats/not-a-uuid');
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { message: 'Not found' });
    });
  });

  describe('listing', () => {
    let carol: TestAccount;
    let secondProject: string;
    const ids: string[] = [];

    before(async () => {
      carol = await createAccount(cp.db.sql);
      for (const name of ['one', 'two', 'three']) ids.push((await created({ name }, carol)).id);
      const res = await call(carol, 'POST', '/projects', { name: 'Second' });
      secondProject = res.body.data.id;
      ids.push((await created({ name: 'four', project_id: secondProject }, carol)).id);
    });

    it("lists the heartbeats of all the caller's projects, oldest first, with the list meta", async () => {
      const res = await call(carol, 'GET', '/heartbeats');
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((h: { id: string }) => h.id),
        ids,
      );
      assert.deepEqual(res.body.meta, { current_page: 1, per_page: 25, total: 4, last_page: 1 });
      assert.match(res.body.data[0].created_at, TIMESTAMP);
    });

    it('filters by project_id', async () => {
      const res = await call(carol, 'GET', `/heartbeats?project_id=${secondProject}`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((h: { name: string }) => h.name),
        ['four'],
      );
      assert.equal(res.body.data[0].project.name, 'Second');
      assert.deepEqual(res.body.meta, { current_page: 1, per_page: 25, total: 1, last_page: 1 });
    });

    it('pages with page and per_page', async () => {
      const first = await call(carol, 'GET', '/heartbeats?per_page=3');
      assert.deepEqual(
        first.body.data.map((h: { id: string }) => h.id),
        ids.slice(0, 3),
      );
      assert.deepEqual(first.body.meta, { current_page: 1, per_page: 3, total: 4, last_page: 2 });
      const second = await call(carol, 'GET', '/heartbeats?per_page=3&page=2');
      assert.deepEqual(
        second.body.data.map((h: { id: string }) => h.id),
        ids.slice(3),
      );
      assert.deepEqual(second.body.meta, { current_page: 2, per_page: 3, total: 4, last_page: 2 });
    });

    it('answers an empty page past the end, with the real total', async () => {
      const res = await call(carol, 'GET', '/heartbeats?per_page=3&page=3');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: [], meta: { current_page: 3, per_page: 3, total: 4, last_page: 2 } });
    });

    it('reports last_page 1 when there is nothing to list', async () => {
      const dave = await createAccount(cp.db.sql);
      const res = await call(dave, 'GET', '/heartbeats');
      assert.deepEqual(res.body, { data: [], meta: { current_page: 1, per_page: 25, total: 0, last_page: 1 } });
    });

    it('accepts per_page 1 and 100, the bounds', async () => {
      assert.equal((await call(carol, 'GET', '/heartbeats?per_page=1')).body.data.length, 1);
      assert.equal((await call(carol, 'GET', '/heartbeats?per_page=100')).body.meta.per_page, 100);
    });

    it('refuses page 0 and a page that is not a number', async () => {
      assertInvalid(await call(carol, 'GET', '/heartbeats?page=0'), 'page', 'The page field must be at least 1.');
      assertInvalid(await call(carol, 'GET', '/heartbeats?page=abc'), 'page', 'The page field must be an integer.');
    });

    it('refuses per_page 0 and 101', async () => {
      assertInvalid(await call(carol, 'GET', '/heartbeats?per_page=0'), 'per_page', 'The per_page field must be at least 1.');
      assertInvalid(await call(carol, 'GET', '/heartbeats?per_page=101'), 'per_page', 'The per_page field must not be greater than 100.');
    });

    it('refuses a project_id filter that is not a uuid', async () => {
      assertInvalid(await call(carol, 'GET', '/heartbeats?project_id=abc'), 'project_id', 'The project_id field must be a valid UUID.');
    });
  });

  describe('updating', () => {
    it('changes only the fields sent and answers the update envelope', async () => {
      const hb = await created({ cron_schedule: '0 * * * *', grace_period: 300 });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { name: 'Renamed' });
      assert.equal(res.status, 200);
      assert.equal(res.body.message, 'Heartbeat updated successfully');
      const { name, updated_at, ...rest } = res.body.data;
      const { name: _n, updated_at: _u, ...was } = hb;
      assert.equal(name, 'Renamed');
      assert.deepEqual(rest, was);
      assert.match(updated_at, TIMESTAMP);
      assert.ok(updated_at >= hb.updated_at);
    });

    it('accepts an empty body as no change', async () => {
      const hb = await created({ period: 3600 });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, {});
      assert.equal(res.status, 200);
      assert.equal(res.body.data.next_ping_at, hb.next_ping_at);
    });

    it('ignores a project_id in the body', async () => {
      const hb = await created();
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { project_id: bob.project_id, name: 'Still mine' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.project_id, alice.project_id);
    });

    it('clears next_ping_at with null', async () => {
      const hb = await created({ next_ping_at: '2030-01-01T00:00:00Z' });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { next_ping_at: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.next_ping_at, null);
    });

    it('sets next_ping_at explicitly, keeping the microseconds', async () => {
      const hb = await created();
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { next_ping_at: '2031-02-03T04:05:06.654321Z' });
      assert.equal(res.body.data.next_ping_at, '2031-02-03T04:05:06.654321Z');
    });

    it('keeps next_ping_at, to the microsecond, when the schedule does not change', async () => {
      const hb = await created({ cron_schedule: '0 0 1 1 *', next_ping_at: '2030-01-01T00:00:00.123456Z' });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { grace_period: 120 });
      assert.equal(res.body.data.next_ping_at, '2030-01-01T00:00:00.123456Z');
      assert.equal(res.body.data.grace_period, 120);
    });

    it('recomputes next_ping_at from now when the cron schedule changes', async () => {
      const hb = await created({ cron_schedule: '0 0 1 1 *', next_ping_at: '2030-01-01T00:00:00Z' });
      const before = Date.now();
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { cron_schedule: '*/5 * * * *' });
      const due = Date.parse(res.body.data.next_ping_at);
      assert.ok(due > before && due <= Date.now() + 300_000, res.body.data.next_ping_at);
      assert.equal(new Date(due).getUTCMinutes() % 5, 0);
      assert.equal(res.body.data.cron_schedule, '*/5 * * * *');
    });

    it('recomputes next_ping_at when the period changes', async () => {
      const hb = await created({ period: 86_400 });
      const before = Date.now();
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { period: 120 });
      const due = Date.parse(res.body.data.next_ping_at);
      assert.ok(due >= before + 120_000 && due <= Date.now() + 120_000, res.body.data.next_ping_at);
    });

    it('recomputes next_ping_at when the time zone of a cron schedule changes', async () => {
      const hb = await created({ cron_schedule: '0 12 * * *', timezone: 'UTC' });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { timezone: 'Asia/Tokyo' });
      assert.match(res.body.data.next_ping_at, /T03:00:00\.000000Z$/);
      assert.equal(res.body.data.timezone, 'Asia/Tokyo');
    });

    it('lets an explicit next_ping_at win over a schedule change in the same request', async () => {
      const hb = await created({ period: 3600 });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { cron_schedule: '* * * * *', next_ping_at: '2030-01-01T00:00:00Z' });
      assert.equal(res.body.data.next_ping_at, '2030-01-01T00:00:00.000000Z');
    });

    it('clears the cron schedule with null and keeps next_ping_at as the explicit one', async () => {
      const hb = await created({ cron_schedule: '0 0 1 1 *' });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { cron_schedule: null });
      assert.equal(res.body.data.cron_schedule, null);
      assert.equal(res.body.data.next_ping_at, hb.next_ping_at);
    });

    it('pauses with active false and resumes with active true', async () => {
      const hb = await created({ period: 3600 });
      const paused = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { active: false });
      assert.equal(paused.body.data.status, 'paused');
      assert.equal(paused.body.data.active, false);
      const resumed = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { active: true });
      assert.equal(resumed.body.data.status, 'new');
      assert.equal(resumed.body.data.active, true);
    });

    it('keeps an open down period across a pause', async () => {
      const hb = await created({ period: 3600 });
      await cp.db.sql`update heartbeats set status = 'down', down_since = now() - interval '1 minute' where id = ${hb.id}`;
      await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { active: false });
      const resumed = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { active: true });
      assert.equal(resumed.body.data.status, 'down');
    });

    it('makes a heartbeat late when next_ping_at is moved into the past', async () => {
      const hb = await created({ grace_period: 3600 });
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { next_ping_at: new Date(Date.now() - 60_000).toISOString() });
      assert.equal(res.body.data.status, 'late');
      const [row] = await cp.db.sql<{ status: string }[]>`select status from heartbeats where id = ${hb.id}`;
      assert.equal(row!.status, 'late');
    });

    it('replaces the linked integrations, and empties them with []', async () => {
      const first = await integrationOf(alice.project_id);
      const second = await integrationOf(alice.project_id);
      const hb = await created({ integration_ids: [first] });
      const replaced = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { integration_ids: [second] });
      assert.deepEqual(replaced.body.data.integration_ids, [second]);
      const untouched = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { name: 'x' });
      assert.deepEqual(untouched.body.data.integration_ids, [second]);
      const emptied = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { integration_ids: [] });
      assert.deepEqual(emptied.body.data.integration_ids, []);
    });

    it('refuses integration_ids of another project', async () => {
      const hb = await created();
      const foreign = await integrationOf(bob.project_id);
      assertInvalid(
        await call(alice, 'PATCH', `/heartbeats/${hb.id}`, { integration_ids: [foreign] }),
        'integration_ids.0',
        'The selected integration_ids.0 is invalid.',
      );
    });

    it('holds every field to the create bounds', async () => {
      const hb = await created();
      const patch = (body: unknown) => call(alice, 'PATCH', `/heartbeats/${hb.id}`, body);
      assertInvalid(await patch({ name: 'n'.repeat(256) }), 'name', 'The name field must not be greater than 255 characters.');
      assertInvalid(await patch({ name: null }), 'name', 'The name field must not be null.');
      assertInvalid(await patch({ grace_period: 59 }), 'grace_period', 'The grace_period field must be at least 60.');
      assertInvalid(await patch({ grace_period: 86_401 }), 'grace_period', 'The grace_period field must not be greater than 86400.');
      assertInvalid(
        await patch({ cron_schedule: CRON_256 }),
        'cron_schedule',
        'The cron_schedule field must not be greater than 255 characters.',
      );
      assertInvalid(
        await patch({ cron_schedule: '* * *' }),
        'cron_schedule',
        `The cron_schedule field is not a valid cron expression: ${validateCron('* * *')}.`,
      );
      assertInvalid(await patch({ period: 59 }), 'period', 'The period field must be at least 60.');
      assertInvalid(
        await patch({ timezone: 'Nowhere/Special' }),
        'timezone',
        'The timezone field must be a valid IANA time zone, such as Europe/Berlin.',
      );
      assertInvalid(await patch({ timezone: null }), 'timezone', 'The timezone field must not be null.');
      assertInvalid(await patch({ next_ping_at: 'soon' }), 'next_ping_at', 'The next_ping_at field must be a valid ISO 8601 date-time.');
      const after = await call(alice, 'GET', `/heartbeats/${hb.id}`);
      assert.deepEqual(after.body.data, hb);
    });

    it('accepts the bounds on update', async () => {
      const hb = await created();
      const res = await call(alice, 'PATCH', `/heartbeats/${hb.id}`, {
        name: 'n'.repeat(255),
        grace_period: 86_400,
        cron_schedule: CRON_255,
        period: 31_536_000,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.grace_period, 86_400);
      assert.equal(res.body.data.cron_schedule, CRON_255);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of [randomUUID(), 'nope']) {
        const res = await call(alice, 'PATCH', `/heartbeats/${id}`, { name: 'x' });
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { message: 'Not found' });
      }
    });
  });

  describe('deleting', () => {
    it('deletes with 204 and then answers 404', async () => {
      const hb = await created();
      const res = await fetch(`${cp.url}/heartbeats/${hb.id}`, { method: 'DELETE', headers: { authorization: alice.auth } });
      assert.equal(res.status, 204);
      assert.equal(await res.text(), '');
      assert.equal((await call(alice, 'GET', `/heartbeats/${hb.id}`)).status, 404);
      const again = await call(alice, 'DELETE', `/heartbeats/${hb.id}`);
      assert.deepEqual([again.status, again.body], [404, { message: 'Not found' }]);
    });

    it('answers 404 for a malformed id', async () => {
      const res = await call(alice, 'DELETE', '/heartbeats/123');
      assert.deepEqual([res.status, res.body], [404, { message: 'Not found' }]);
    });
  });

  describe('tenant isolation', () => {
    it('answers 404 to another account reading, updating or deleting a heartbeat by id', async () => {
      const hb = await created();
      for (const [method, body] of [['GET'], ['PATCH', { name: 'mine now' }], ['DELETE']] as const) {
        const res = await call(bob, method, `/heartbeats/${hb.id}`, body);
        assert.equal(res.status, 404, method);
        assert.deepEqual(res.body, { message: 'Not found' });
      }
      const still = await call(alice, 'GET', `/heartbeats/${hb.id}`);
      assert.deepEqual(still.body.data, hb);
    });

    it("answers 403 to listing another account's project", async () => {
      const res = await call(bob, 'GET', `/heartbeats?project_id=${alice.project_id}`);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { message: 'Unauthorized access' });
    });

    it("answers 403 to creating in another account's project, or in a project that does not exist", async () => {
      for (const projectId of [alice.project_id, randomUUID()]) {
        const res = await create({ project_id: projectId }, bob);
        assert.equal(res.status, 403);
        assert.deepEqual(res.body, { message: 'Unauthorized access' });
      }
    });

    it("checks the body before the project: a malformed body in another account's project is a 422", async () => {
      assertInvalid(
        await create({ project_id: alice.project_id, grace_period: 1 }, bob),
        'grace_period',
        'The grace_period field must be at least 60.',
      );
    });

    it("lists only the caller's own heartbeats", async () => {
      const hb = await created();
      const res = await call(bob, 'GET', '/heartbeats?per_page=100');
      assert.ok(!res.body.data.some((h: { id: string }) => h.id === hb.id));
      assert.ok(res.body.data.every((h: { project_id: string }) => h.project_id === bob.project_id));
    });
  });

  describe('authentication', () => {
    it('answers 401 without a token on every endpoint', async () => {
      const id = randomUUID();
      const attempts: [string, string, unknown?][] = [
        ['GET', '/heartbeats'],
        ['POST', '/heartbeats', { name: 'x', project_id: alice.project_id }],
        ['GET', `/heartbeats/${id}`],
        ['PATCH', `/heartbeats/${id}`, { name: 'x' }],
        ['DELETE', `/heartbeats/${id}`],
      ];
      for (const [method, path, body] of attempts) {
        const res = await call(null, method, path, body);
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.deepEqual(res.body, { message: 'Unauthorized' });
      }
    });

    it('answers 401 before validating the body', async () => {
      const res = await call(null, 'POST', '/heartbeats', { grace_period: 'x' });
      assert.deepEqual([res.status, res.body], [401, { message: 'Unauthorized' }]);
    });

    it('answers 401 to an unknown token', async () => {
      const res = await fetch(`${cp.url}/heartbeats`, { headers: { authorization: 'Bearer upt_thisTokenDoesNotExist000000' } });
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { message: 'Unauthorized' });
    });
  });
});
