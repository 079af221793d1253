import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { formatTimestamp } from '../../control-plane/src/platform/http/time.ts';
import { eventually } from '../harness/streams.ts';
import { startDeadlinePlane, type DeadlinePlane } from './deadline-helpers.ts';

async function createHeartbeat(plane: DeadlinePlane, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await plane.api('POST', '/heartbeats', { name: 'Nightly backup', project_id: plane.account.project_id, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

const eventsReach = (plane: DeadlinePlane, id: string, n: number) =>
  eventually(async () => {
    const events = await plane.events(id);
    return events.length >= n && events;
  }, `${n} events of ${id}`);

/** The ping log through the API once it holds `n` pings, oldest first. */
async function pingLog(plane: DeadlinePlane, id: string, n: number) {
  return eventually(async () => {
    const res = await plane.api('GET', `/heartbeats/${id}/pings`);
    assert.equal(res.status, 200);
    return res.body.data.length >= n && [...res.body.data].reverse();
  }, `${n} pings of ${id} logged`);
}

const read = async (plane: DeadlinePlane, id: string) => (await plane.api('GET', `/heartbeats/${id}`)).body.data;

describe('heartbeat run rules through the ping URLs', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane();
  });
  after(() => plane.stop());

  it('pairs overlapping runs by run id, and fails the one that was too short', async () => {
    const hb = await createHeartbeat(plane, { period: 3600, grace_period: 600, min_duration: 300, max_duration: 7200 });
    const [a, b] = [randomUUID(), randomUUID()];
    assert.equal((await plane.ping(`/heartbeat/${hb.id}/start?rid=${a}`)).status, 200);
    assert.equal((await plane.ping(`/heartbeat/${hb.id}/start?rid=${b}`)).status, 200);
    await pingLog(plane, hb.id, 2);
    const running = await read(plane, hb.id);
    assert.equal(running.status, 'running');
    assert.deepEqual(running.running.map((r: { rid: string }) => r.rid).sort(), [a, b].sort());

    assert.equal((await plane.ping(`/heartbeat/${hb.id}?rid=${b}`)).status, 200);
    const events = await eventsReach(plane, hb.id, 3);
    const down = events.find((e) => e.kind === 'heartbeat.down')!;
    assert.equal(down.data.data.reason, 'too_short');
    assert.equal(down.data.data.ping.rid, b);
    assert.equal(typeof down.data.data.ping.run_duration_seconds, 'number');

    const log = await pingLog(plane, hb.id, 3);
    assert.deepEqual(
      log.map((p: { kind: string; rid: string; outcome: string | null; reason: string | null }) => [p.kind, p.rid, p.outcome, p.reason]),
      [
        ['start', a, null, null],
        ['start', b, null, null],
        ['success', b, 'fail', 'too_short'],
      ],
    );
    const duration = log[2].duration_seconds;
    const measured = (Date.parse(log[2].received_at) - Date.parse(log[1].received_at)) / 1000;
    assert.ok(duration >= 0 && Math.abs(duration - measured) < 1, `${duration} s measured from its own /start (${measured} s by the edge)`);
    const after = await read(plane, hb.id);
    assert.deepEqual(after.running, [], 'going down ends every run');
    assert.equal(after.failed_runs, 1);
  });

  it('answers 400 to a run id that is not a UUID, and stores nothing', async () => {
    const hb = await createHeartbeat(plane, {});
    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/start?rid=nightly-1`), { status: 400, text: 'rid must be a UUID' });
    assert.equal((await plane.db.sql`select 1 from heartbeat_pings where heartbeat_id = ${hb.id}`).length, 0);
  });

  it('lets a run take its max_duration, then goes down too_long', async () => {
    const hb = await createHeartbeat(plane, { grace_period: 60, max_duration: 180 });
    assert.equal((await plane.ping(`/heartbeat/${hb.id}/start`)).status, 200);
    await eventsReach(plane, hb.id, 1);
    const [row] = await plane.db.sql<{ started_at: string }[]>`select started_at from heartbeats where id = ${hb.id}`;
    const start = Date.parse(formatTimestamp(row!.started_at));
    plane.clock.advance(start + 120_000 - plane.clock.now());
    assert.equal((await read(plane, hb.id)).status, 'running', 'past the grace period, inside max_duration');
    plane.clock.advance(start + 180_001 - plane.clock.now());
    const down = (await eventsReach(plane, hb.id, 2))[1]!;
    assert.deepEqual([down.kind, down.data.data.reason], ['heartbeat.down', 'too_long']);
    assert.equal(Date.parse(down.data.occurred_at), start + 180_000);
  });

  it('alerts at the alert_after_failures-th failed run in a row, not before', async () => {
    const hb = await createHeartbeat(plane, { period: 3600, alert_after_failures: 2 });
    assert.equal((await plane.ping(`/heartbeat/${hb.id}/fail`)).status, 200);
    await pingLog(plane, hb.id, 1);
    const tolerated = await read(plane, hb.id);
    assert.deepEqual([tolerated.status, tolerated.failed_runs], ['up', 1]);
    assert.deepEqual(await plane.events(hb.id), []);

    assert.equal((await plane.ping(`/heartbeat/${hb.id}/7`)).status, 200);
    const [down] = await eventsReach(plane, hb.id, 1);
    assert.deepEqual([down!.kind, down!.data.data.reason, down!.data.data.ping.exit_code], ['heartbeat.down', 'failed', 7]);
    assert.equal((await read(plane, hb.id)).failed_runs, 2);
  });

  it('judges a run by its output and by the exit codes that mean success', async () => {
    const hb = await createHeartbeat(plane, {
      period: 3600,
      success_exit_codes: [0, 3],
      output_rules: [
        { match: 'contains', value: 'ERROR', outcome: 'fail' },
        { match: 'regex', value: '(?i)nothing to (do|sync)', outcome: 'success' },
      ],
    });
    assert.equal((await plane.ping(`/heartbeat/${hb.id}`, { method: 'POST', body: 'copied 12 files\nERROR: disk full\n' })).status, 200);
    const [down] = await eventsReach(plane, hb.id, 1);
    assert.deepEqual([down!.kind, down!.data.data.reason], ['heartbeat.down', 'output']);

    assert.equal((await plane.ping(`/heartbeat/${hb.id}/3`)).status, 200);
    const up = (await eventsReach(plane, hb.id, 2))[1]!;
    assert.equal(up.kind, 'heartbeat.up', 'exit code 3 means success for this job');

    assert.equal((await plane.ping(`/heartbeat/${hb.id}/fail`, { method: 'POST', body: 'Nothing to sync today' })).status, 200);
    const log = await pingLog(plane, hb.id, 3);
    assert.deepEqual(
      log.map((p: { kind: string; outcome: string; reason: string | null }) => [p.kind, p.outcome, p.reason]),
      [
        ['success', 'fail', 'output'],
        ['fail', 'success', null],
        ['fail', 'success', null],
      ],
    );
    assert.equal(log[1].exit_code, 3);
    assert.equal(log[2].body, 'Nothing to sync today');
    assert.equal((await read(plane, hb.id)).status, 'up');
    assert.equal((await plane.events(hb.id)).length, 2, 'a failure its output turned into a success raises nothing');
  });

  it('fails a success that comes too soon after the previous one', async () => {
    const hb = await createHeartbeat(plane, { period: 3600, too_frequent_ratio: 0.5 });
    assert.equal((await plane.ping(`/heartbeat/${hb.id}`)).status, 200);
    await pingLog(plane, hb.id, 1);
    assert.equal((await plane.ping(`/heartbeat/${hb.id}`)).status, 200);
    const [down] = await eventsReach(plane, hb.id, 1);
    assert.deepEqual([down!.kind, down!.data.data.reason], ['heartbeat.down', 'too_frequent']);
  });

  it('expects the next run on the schedule’s wall clock in its time zone after a ping', async () => {
    const hb = await createHeartbeat(plane, { cron_schedule: '30 2 * * *', timezone: 'Asia/Kathmandu', grace_period: 600 });
    assert.equal((await plane.ping(`/heartbeat/${hb.id}`)).status, 200);
    const [logged] = await pingLog(plane, hb.id, 1);
    const next = await eventually(async () => {
      const h = await read(plane, hb.id);
      return h.last_ping_at !== null && h.next_ping_at;
    }, 'next_ping_at moved by the ping');
    const wall = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kathmandu', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    assert.equal(wall.format(new Date(next)), '02:30', 'Kathmandu is UTC+5:45: 02:30 there is 20:45 UTC the day before');
    const ahead = Date.parse(next) - Date.parse(logged.received_at);
    assert.ok(ahead > 0 && ahead <= 86_400_000, `the next 02:30 after the ping, within a day (${ahead} ms)`);
  });

  it('keeps a 100 KB job output with the ping and finds a keyword at its end', async () => {
    const hb = await createHeartbeat(plane, { period: 3600, output_rules: [{ match: 'contains', value: 'FATAL', outcome: 'fail' }] });
    const output = `${'log line\n'.repeat(11_000)}FATAL`;
    assert.equal(output.length < 100 * 1024, true);
    assert.equal((await plane.ping(`/heartbeat/${hb.id}`, { method: 'POST', body: output })).status, 200);
    const [down] = await eventsReach(plane, hb.id, 1);
    assert.equal(down!.data.data.reason, 'output');
    const [logged] = await pingLog(plane, hb.id, 1);
    assert.equal(logged.body, output);
    assert.equal(logged.body_size, output.length);
  });
});

describe('heartbeat run settings through the API', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane({ roles: ['api'] });
  });
  after(() => plane.stop());

  const create = (body: Record<string, unknown>) =>
    plane.api('POST', '/heartbeats', { name: 'Job', project_id: plane.account.project_id, ...body });

  it('stores and answers every run setting, and changes them with PATCH', async () => {
    const res = await create({
      max_duration: 7200,
      min_duration: 60,
      too_frequent_ratio: 0.25,
      alert_after_failures: 3,
      success_exit_codes: [0, 75],
      output_rules: [{ match: 'regex', value: 'ERROR|FATAL', outcome: 'fail' }],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const hb = res.body.data;
    assert.deepEqual(
      [hb.max_duration, hb.min_duration, hb.too_frequent_ratio, hb.alert_after_failures, hb.success_exit_codes, hb.output_rules],
      [7200, 60, 0.25, 3, [0, 75], [{ match: 'regex', value: 'ERROR|FATAL', outcome: 'fail' }]],
    );
    const patched = await plane.api('PATCH', `/heartbeats/${hb.id}`, { max_duration: null, min_duration: 30, output_rules: [] });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(
      [
        patched.body.data.max_duration,
        patched.body.data.min_duration,
        patched.body.data.output_rules,
        patched.body.data.alert_after_failures,
      ],
      [null, 30, [], 3],
    );
  });

  for (const [name, body, field] of [
    ['a max_duration of 0', { max_duration: 0 }, 'max_duration'],
    ['a too_frequent_ratio above 1', { too_frequent_ratio: 1.5 }, 'too_frequent_ratio'],
    ['an alert_after_failures of 0', { alert_after_failures: 0 }, 'alert_after_failures'],
    ['an exit code of 256', { success_exit_codes: [0, 256] }, 'success_exit_codes.1'],
    ['an exit code listed twice', { success_exit_codes: [0, 0] }, 'success_exit_codes'],
    [
      'an output rule with an invalid pattern',
      { output_rules: [{ match: 'regex', value: '(unclosed', outcome: 'fail' }] },
      'output_rules.0.value',
    ],
    [
      'an output rule with an unknown outcome',
      { output_rules: [{ match: 'contains', value: 'x', outcome: 'maybe' }] },
      'output_rules.0.outcome',
    ],
    ['a min_duration not below max_duration', { max_duration: 60, min_duration: 60 }, 'min_duration'],
    ['a min_duration not below the grace period', { grace_period: 120, min_duration: 600 }, 'min_duration'],
  ] as const) {
    it(`refuses ${name}, naming ${field}`, async () => {
      const res = await create(body);
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.ok(res.body.errors?.[field], `${field} in ${JSON.stringify(res.body.errors)}`);
    });
  }

  it('checks min_duration against the stored max_duration on PATCH', async () => {
    const hb = (await create({ max_duration: 600 })).body.data;
    const res = await plane.api('PATCH', `/heartbeats/${hb.id}`, { min_duration: 900 });
    assert.equal(res.status, 422);
    assert.ok(res.body.errors.min_duration);
  });
});
