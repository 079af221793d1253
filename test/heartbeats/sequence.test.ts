import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPings, type SequencePing } from '../../control-plane/src/heartbeats/sequence.ts';
import type { HeartbeatState, PingKind } from '../../control-plane/src/heartbeats/state.ts';

// t(s, ms) is that many seconds (and milliseconds) after 2026-03-10T12:00:00Z.
const T0 = Date.parse('2026-03-10T12:00:00.000Z');
const t = (seconds: number, ms = 0): Date => new Date(T0 + seconds * 1000 + ms);

// Up, pinged at T0, a period of 60 s and a grace of 60 s: a miss is raised 120 s after a ping.
const up: HeartbeatState = {
  status: 'up',
  next_ping_at: t(60),
  last_ping_at: t(0),
  last_ping_kind: 'success',
  started_at: null,
  down_since: null,
  grace_period: 60,
  cron_schedule: null,
  timezone: 'UTC',
  period: 60,
  active: true,
  runs: [],
  last_success_at: null,
  failed_runs: 0,
  max_duration: null,
  min_duration: null,
  too_frequent_ratio: null,
  alert_after_failures: 1,
};
const p = (kind: PingKind, seconds: number, ms = 0): SequencePing => ({ kind, at: t(seconds, ms) });
const every = (from: number, to: number, step: number, kind: PingKind = 'success') => {
  const out: SequencePing[] = [];
  for (let s = from; s <= to; s += step) out.push(p(kind, s));
  return out;
};

interface Row {
  name: string;
  state: HeartbeatState;
  pings: SequencePing[];
  now: Date;
  /** The events as `type reason @seconds`, with the index of the ping that caused each (or -). */
  events: string[];
  status: HeartbeatState['status'];
  skipped?: number[];
}

const rows: Row[] = [
  {
    name: 'a backlog of pings a second apart, replayed long after: no miss, up at the end',
    state: up,
    pings: every(1, 300, 1),
    now: t(340),
    events: [],
    status: 'up',
  },
  {
    name: 'the clock is applied only after the last ping: a miss after it is raised at its instant',
    state: up,
    pings: every(1, 10, 1),
    now: t(200),
    // One tick past both boundaries raises the down alone, as the rules do.
    events: ['heartbeat.down missed @130 -'],
    status: 'down',
  },
  {
    name: 'a gap wider than period and grace inside the backlog: down at the gap, up at the ping after it',
    state: up,
    pings: [...every(1, 10, 1), ...every(200, 210, 1)],
    now: t(211),
    events: ['heartbeat.down missed @130 -', 'heartbeat.up ping @200 10'],
    status: 'up',
  },
  {
    name: 'a gap wider than the period only: late, then back up silently',
    state: up,
    pings: [p('success', 1), p('success', 100)],
    now: t(101),
    events: ['heartbeat.late missed @61 -'],
    status: 'up',
  },
  {
    name: 'a fail between successes: down at the fail, up at the next success',
    state: up,
    pings: [p('success', 1), p('fail', 2), p('success', 3)],
    now: t(4),
    events: ['heartbeat.down failed @2 1', 'heartbeat.up ping @3 2'],
    status: 'up',
  },
  {
    name: 'a start and its completion in one step: started, then up; no timeout judged',
    state: up,
    pings: [p('start', 5), p('success', 30)],
    now: t(31),
    events: ['heartbeat.started ping @5 0'],
    status: 'up',
  },
  {
    name: 'a start whose completion never came: the start timeout at its instant',
    state: up,
    pings: [p('start', 5)],
    now: t(100),
    events: ['heartbeat.started ping @5 0', 'heartbeat.down start_timeout @65 -'],
    status: 'down',
  },
  {
    name: 'pings of one kind in one millisecond (a loop): each a repeat, none skipped',
    state: up,
    pings: [p('success', 5), p('success', 5), p('success', 5)],
    now: t(6),
    events: [],
    status: 'up',
    skipped: [],
  },
  {
    name: 'a ping before the last one applied: left out for the history merge',
    state: up,
    pings: [p('success', 5), p('fail', 3), p('success', 6)],
    now: t(7),
    events: [],
    status: 'up',
    skipped: [1],
  },
  {
    name: "a ping stamped after the step's clock (another host's clock ahead) is judged at the clock",
    state: { ...up, status: 'late', next_ping_at: t(60) },
    pings: [p('success', 90)],
    now: t(80),
    events: [],
    status: 'up',
  },
  {
    name: 'paused: pings are recorded and nothing is raised',
    state: { ...up, status: 'paused', active: false },
    pings: [p('fail', 5), p('success', 500)],
    now: t(1000),
    events: [],
    status: 'paused',
  },
];

const show = (seconds: number) => Math.round(((seconds - T0) / 1000) * 1000) / 1000;

describe('a run of pings applied in one step', () => {
  for (const row of rows) {
    it(row.name, () => {
      const seq = applyPings(row.state, row.pings, row.now);
      assert.deepEqual(
        seq.events.map((e) => `${e.event.type} ${e.event.reason} @${show(e.event.at.getTime())} ${e.ping ?? '-'}`),
        row.events,
      );
      assert.equal(seq.state.status, row.status);
      assert.equal(seq.after.length, row.pings.length, 'a state (or null) for every ping');
      if (row.skipped) assert.deepEqual(seq.skipped, row.skipped);
      for (const i of seq.skipped) assert.equal(seq.after[i], null);
    });
  }

  it('gives each event the states around it', () => {
    const seq = applyPings(up, [p('success', 1), p('fail', 2), p('success', 3)], t(4));
    const [down, back] = seq.events;
    assert.deepEqual([down!.before.status, down!.after.status], ['up', 'down']);
    assert.deepEqual([back!.before.status, back!.after.status, back!.before.down_since?.getTime()], ['down', 'up', t(2).getTime()]);
  });

  it('matches the pings applied one at a time, each judged at its own instant', () => {
    const pings = [p('success', 1), p('start', 70), p('fail', 75), p('success', 300), p('success', 301)];
    const all = applyPings(up, pings, t(500));
    let state = up;
    const events: string[] = [];
    for (const [i, x] of pings.entries()) {
      const one = applyPings(state, [x], pings[i + 1]?.at ?? t(500));
      state = one.state;
      events.push(...one.events.map((e) => `${e.event.type}@${e.event.at.getTime()}`));
    }
    assert.deepEqual(
      all.events.map((e) => `${e.event.type}@${e.event.at.getTime()}`),
      events,
    );
    assert.deepEqual(all.state, state);
  });
});
