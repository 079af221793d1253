import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { consumerName } from '../../control-plane/src/heartbeats/deadline/consumer.ts';
import { formatTimestamp } from '../../control-plane/src/platform/http/time.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { isoIn, startDeadlinePlane, type DeadlinePlane } from './deadline-helpers.ts';

const MINUTE = 60_000;

async function createHeartbeat(plane: DeadlinePlane, body: Record<string, unknown>): Promise<{ id: string; next_ping_at: string | null }> {
  const res = await plane.api('POST', '/heartbeats', { name: 'Nightly backup', project_id: plane.account.project_id, ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/** The owner of the heartbeat's partition has taken it in: its deadline is armed and edges accept it. */
const watched = (plane: DeadlinePlane, id: string) =>
  eventually(async () => (await plane.heartbeats.get(id))?.operation === 'PUT', `heartbeat ${id} in KV heartbeats`);

const kindsOf = async (plane: DeadlinePlane, id: string) => (await plane.events(id)).map((e) => e.kind);

const eventsReach = (plane: DeadlinePlane, id: string, n: number) =>
  eventually(async () => {
    const events = await plane.events(id);
    return events.length >= n && events;
  }, `${n} events of ${id}`);

async function row(plane: DeadlinePlane, id: string) {
  const [r] = await plane.db.sql<{ status: string; last_ping_at: string | null; started_at: string | null; down_since: string | null }[]>`
    select status, last_ping_at, started_at, down_since from heartbeats where id = ${id}`;
  return r!;
}

async function outboxCount(plane: DeadlinePlane, id: string): Promise<number> {
  const [r] = await plane.db.sql<{ n: number }[]>`select count(*)::int as n from outbox_events where payload->'subject'->>'id' = ${id}`;
  return r!.n;
}

describe('heartbeat deadlines', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane();
  });
  after(() => plane.stop());

  it('marks a heartbeat late when next_ping_at passes, down when grace runs out, up on the next ping, each once', async () => {
    const hb = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 2_000), grace_period: 60 });
    await watched(plane, hb.id);
    const due = Date.parse(hb.next_ping_at!);

    plane.clock.advance(2_001);
    const [late] = await eventsReach(plane, hb.id, 1);
    assert.equal(late!.kind, 'heartbeat.late');
    assert.equal(Date.parse(late!.data.occurred_at), due);
    assert.equal((await row(plane, hb.id)).status, 'late');

    plane.clock.advance(MINUTE);
    const events = await eventsReach(plane, hb.id, 2);
    assert.equal(events[1]!.kind, 'heartbeat.down');
    assert.equal(events[1]!.data.data.reason, 'missed');
    assert.equal(Date.parse(events[1]!.data.occurred_at), due + MINUTE, 'the instant grace ran out');
    assert.equal((await row(plane, hb.id)).status, 'down');

    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}`), { status: 200, text: 'OK' });
    const up = (await eventsReach(plane, hb.id, 3))[2]!;
    assert.equal(up.kind, 'heartbeat.up');
    assert.equal(up.data.data.down_since, new Date(due + MINUTE).toISOString());
    assert.equal((await row(plane, hb.id)).status, 'up');

    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/fail`), { status: 200, text: 'OK' });
    const again = (await eventsReach(plane, hb.id, 4))[3]!;
    assert.deepEqual([again.kind, again.data.data.reason], ['heartbeat.down', 'failed']);
    assert.deepEqual(await kindsOf(plane, hb.id), ['heartbeat.late', 'heartbeat.down', 'heartbeat.up', 'heartbeat.down']);
    assert.equal(await outboxCount(plane, hb.id), 4, 'each event written once');
  });

  it('raises the miss of every heartbeat expiring in the same instant, once each', async () => {
    const n = 300;
    const next = isoIn(plane.clock, 2_000);
    const ids = (
      await plane.db.sql<{ id: string }[]>`
        insert into heartbeats (project_id, name, grace_period, next_ping_at)
        select ${plane.account.project_id}, 'job ' || i, 60, ${next} from generate_series(1, ${n}) i returning id`
    ).map((r) => r.id);
    await eventually(async () => {
      let present = 0;
      for (const id of ids) if ((await plane.heartbeats.get(id))?.operation === 'PUT') present++;
      return present === n;
    }, 'every heartbeat watched');

    plane.clock.advance(2_000 + MINUTE + 1);
    await eventually(async () => {
      const [r] = await plane.db.sql<{ n: number }[]>`
        select count(*)::int as n from heartbeats where id = any(${plane.db.sql.array(ids)}::uuid[]) and status = 'down'`;
      return r!.n === n;
    }, 'every heartbeat down');
    const written = await plane.db.sql<{ id: string; kind: string; n: number }[]>`
      select payload->'subject'->>'id' as id, kind, count(*)::int as n from outbox_events
      where payload->'subject'->>'id' = any(${plane.db.sql.array(ids)}) group by 1, 2`;
    assert.equal(written.length, n, 'one kind of event per heartbeat');
    assert.ok(
      written.every((w) => w.kind === 'heartbeat.down' && w.n === 1),
      'exactly one heartbeat.down each',
    );
    const published = await eventually(async () => {
      const all = await readStream(plane.nats.nc, plane.nats.names.streams.events);
      const mine = all.filter((e) => ids.includes(e.data.subject.id));
      return mine.length >= n && mine;
    }, 'every down published');
    assert.equal(published.length, n);
  });

  it('publishes, once, the late a PATCH causes by moving next_ping_at into the past, and keeps watching', async () => {
    const hb = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 60 * MINUTE), grace_period: 600 });
    await watched(plane, hb.id);
    const patched = await plane.api('PATCH', `/heartbeats/${hb.id}`, { next_ping_at: isoIn(plane.clock, -MINUTE) });
    assert.equal(patched.body.data.status, 'late');
    const [late] = await eventsReach(plane, hb.id, 1);
    assert.equal(late!.kind, 'heartbeat.late');

    plane.clock.advance(10 * MINUTE);
    const events = await eventsReach(plane, hb.id, 2);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['heartbeat.late', 'heartbeat.down'],
    );
    assert.equal(await outboxCount(plane, hb.id), 2);
  });

  it('applies a grace period shortened through the API at once', async () => {
    const hb = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 1_000), grace_period: 3_600 });
    await watched(plane, hb.id);
    plane.clock.advance(2 * MINUTE);
    await eventsReach(plane, hb.id, 1);
    await plane.api('PATCH', `/heartbeats/${hb.id}`, { grace_period: 60 });
    const events = await eventsReach(plane, hb.id, 2);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['heartbeat.late', 'heartbeat.down'],
    );
  });

  it('raises nothing for a paused heartbeat', async () => {
    const paused = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 2_000), grace_period: 60, active: false });
    const active = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 2_000), grace_period: 60 });
    await watched(plane, paused.id);
    await watched(plane, active.id);
    plane.clock.advance(2_000 + MINUTE + 1);
    assert.deepEqual(
      (await eventsReach(plane, active.id, 1)).map((e) => e.kind),
      ['heartbeat.down'],
    );
    assert.deepEqual(await plane.events(paused.id), []);
    assert.equal((await row(plane, paused.id)).status, 'paused');
  });

  it('forgets a deleted heartbeat: no alert, its key gone, its pings refused', async () => {
    const gone = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 2_000), grace_period: 60 });
    const kept = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 2_000), grace_period: 60 });
    await watched(plane, gone.id);
    await watched(plane, kept.id);
    assert.equal((await plane.api('DELETE', `/heartbeats/${gone.id}`)).status, 204);
    await eventually(async () => (await plane.heartbeats.get(gone.id))?.operation !== 'PUT', 'key deleted');
    assert.equal((await plane.ping(`/heartbeat/${gone.id}`)).status, 404);
    plane.clock.advance(2_000 + MINUTE + 1);
    await eventsReach(plane, kept.id, 1);
    assert.deepEqual(await plane.events(gone.id), []);
  });
});

describe('heartbeat pings', () => {
  let plane: DeadlinePlane;
  before(async () => {
    plane = await startDeadlinePlane();
  });
  after(() => plane.stop());

  it('makes a heartbeat down at once on /fail, with one heartbeat.down naming the ping', async () => {
    const hb = await createHeartbeat(plane, { next_ping_at: isoIn(plane.clock, 60 * MINUTE) });
    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/fail`, { method: 'POST', body: 'disk full' }), { status: 200, text: 'OK' });
    const [down] = await eventsReach(plane, hb.id, 1);
    assert.equal(down!.kind, 'heartbeat.down');
    assert.equal(down!.data.data.reason, 'failed');
    assert.deepEqual(down!.data.data.ping, { kind: 'fail', exit_code: null, region: null });
    assert.equal((await row(plane, hb.id)).status, 'down');

    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/3`), { status: 200, text: 'OK' });
    await eventually(
      async () => (await plane.db.sql`select 1 from heartbeat_pings where heartbeat_id = ${hb.id}`).length === 2,
      'second ping logged',
    );
    assert.deepEqual(await kindsOf(plane, hb.id), ['heartbeat.down'], 'a fail while down stays in the same down period');

    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/0`), { status: 200, text: 'OK' });
    const up = (await eventsReach(plane, hb.id, 2))[1]!;
    assert.equal(up.kind, 'heartbeat.up');
    assert.equal(typeof up.data.data.duration_seconds, 'number');
    assert.equal((await row(plane, hb.id)).status, 'up');
  });

  it('changes nothing when a ping is delivered again', async () => {
    const hb = await createHeartbeat(plane, {});
    assert.equal((await plane.ping(`/heartbeat/${hb.id}/fail`)).status, 200);
    await eventsReach(plane, hb.id, 1);
    const before = await row(plane, hb.id);
    const subject = plane.nats.names.subjects.ping(pingPartition(hb.id, plane.config.PING_PARTITIONS), hb.id);
    const [original] = await readStream(plane.nats.nc, plane.nats.names.streams.pings, subject);

    // Past the server's duplicate window a replay carries another Nats-Msg-Id: only the ping's id tells.
    const ack = await jetstream(plane.nats.nc).publish(subject, JSON.stringify(original!.data), { msgID: `${original!.data.id}-replayed` });
    const jsm = await jetstreamManager(plane.nats.nc);
    await eventually(async () => {
      const info = await jsm.consumers.info(
        plane.nats.names.streams.pings,
        consumerName(pingPartition(hb.id, plane.config.PING_PARTITIONS)),
      );
      return info.ack_floor.stream_seq >= ack.seq;
    }, 'the replay acknowledged');

    assert.deepEqual(await row(plane, hb.id), before);
    assert.deepEqual(await kindsOf(plane, hb.id), ['heartbeat.down']);
    assert.equal(await outboxCount(plane, hb.id), 1);
    const [logged] = await plane.db.sql<{ n: number }[]>`select count(*)::int as n from heartbeat_pings where heartbeat_id = ${hb.id}`;
    assert.equal(logged!.n, 1);
  });

  it('marks a started job down when it does not complete within grace', async () => {
    const hb = await createHeartbeat(plane, { grace_period: 60 });
    assert.deepEqual(await plane.ping(`/heartbeat/${hb.id}/start`), { status: 200, text: 'OK' });
    const [started] = await eventsReach(plane, hb.id, 1);
    assert.equal(started!.kind, 'heartbeat.started');
    const running = await row(plane, hb.id);
    assert.equal(running.status, 'running');

    // Pings carry the stream's time: move the test clock to just past the start + grace.
    const timeout = Date.parse(formatTimestamp(running.started_at!)) + MINUTE;
    plane.clock.advance(timeout - plane.clock.now());
    assert.deepEqual(await kindsOf(plane, hb.id), ['heartbeat.started'], 'not down at exactly start + grace');
    plane.clock.advance(1);
    const down = (await eventsReach(plane, hb.id, 2))[1]!;
    assert.deepEqual([down.kind, down.data.data.reason], ['heartbeat.down', 'start_timeout']);
    assert.equal(Date.parse(down.data.occurred_at), timeout);
  });
});
