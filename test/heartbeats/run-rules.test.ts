import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_OPEN_RUNS,
  nextState,
  type HeartbeatEvent,
  type HeartbeatInput,
  type HeartbeatState,
  type PingJudgement,
  type PingKind,
} from '../../control-plane/src/heartbeats/state.ts';

// T0 = 2026-03-10T12:00:00Z; t(s) is that many seconds later.
const T0 = Date.parse('2026-03-10T12:00:00.000Z');
const t = (seconds: number): Date => new Date(T0 + seconds * 1000);

// Up, last success an hour ago, next ping due at T0, grace 60 s, period 1 h, no run rules.
const up: HeartbeatState = {
  status: 'up',
  next_ping_at: t(0),
  last_ping_at: t(-3600),
  last_ping_kind: 'success',
  started_at: null,
  runs: [],
  down_since: null,
  last_success_at: t(-3600),
  failed_runs: 0,
  grace_period: 60,
  cron_schedule: null,
  timezone: 'UTC',
  period: 3600,
  active: true,
  max_duration: null,
  min_duration: null,
  too_frequent_ratio: null,
  alert_after_failures: 1,
};
const hb = (overrides: Partial<HeartbeatState>): HeartbeatState => ({ ...up, ...overrides });
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const running = (runs: [string | null, number][], overrides: Partial<HeartbeatState> = {}): HeartbeatState =>
  hb({
    status: 'running',
    last_ping_at: t(Math.max(...runs.map(([, s]) => s))),
    last_ping_kind: 'start',
    started_at: runs.find(([rid]) => rid === null) ? t(runs.find(([rid]) => rid === null)![1]) : null,
    runs: runs.filter(([rid]) => rid !== null).map(([rid, s]) => ({ rid: rid!, started_at: t(s) })),
    ...overrides,
  });

const tick: HeartbeatInput = { type: 'tick' };
const ping = (kind: PingKind, at: Date, rid: string | null = null, reason: 'output' | null = null): HeartbeatInput => ({
  type: 'ping',
  kind,
  at,
  rid,
  reason,
});
const down = (reason: HeartbeatEvent['reason'], at: Date): HeartbeatEvent => ({ type: 'heartbeat.down', reason, at });
const judged = (outcome: PingJudgement['outcome'], reason: PingJudgement['reason'], duration_ms: number | null): PingJudgement => ({
  outcome,
  reason,
  duration_ms,
});

interface Row {
  name: string;
  state: HeartbeatState;
  input: HeartbeatInput;
  now: Date;
  expect: Partial<HeartbeatState>;
  events: HeartbeatEvent[] | 'any';
  judgement?: PingJudgement;
  deadline?: Date | null;
}

const rows: Row[] = [
  // Runs and run ids.
  {
    name: 'opens a run keyed by its run id on /start?rid=',
    state: up,
    input: ping('start', t(-10), A),
    now: t(-10),
    expect: { status: 'running', started_at: null, runs: [{ rid: A, started_at: t(-10) }] },
    events: [{ type: 'heartbeat.started', reason: 'ping', at: t(-10) }],
    judgement: judged(null, null, null),
    deadline: new Date(t(50).getTime() + 1),
  },
  {
    name: 'opens the run without an id on a plain /start',
    state: up,
    input: ping('start', t(-10)),
    now: t(-10),
    expect: { status: 'running', started_at: t(-10), runs: [] },
    events: 'any',
  },
  {
    name: 'closes the run with the same id and measures it, leaving the other one running',
    state: running([
      [A, -100],
      [B, -50],
    ]),
    input: ping('success', t(-20), A),
    now: t(-20),
    expect: { status: 'running', runs: [{ rid: B, started_at: t(-50) }], last_success_at: t(-20) },
    events: [],
    judgement: judged('success', null, 80_000),
  },
  {
    name: 'reads up once the last open run completes',
    state: running([[B, -50]]),
    input: ping('success', t(-20), B),
    now: t(-20),
    expect: { status: 'up', runs: [] },
    events: [],
    judgement: judged('success', null, 30_000),
  },
  {
    name: 'gives no duration to a completion whose run id matches no open run',
    state: running([[A, -50]]),
    input: ping('success', t(-20), B),
    now: t(-20),
    expect: { status: 'running', runs: [{ rid: A, started_at: t(-50) }] },
    events: [],
    judgement: judged('success', null, null),
  },
  {
    name: 'closes the run without an id on a plain completion, leaving runs with ids open',
    state: running([
      [null, -40],
      [A, -50],
    ]),
    input: ping('success', t(-20)),
    now: t(-20),
    expect: { status: 'running', started_at: null, runs: [{ rid: A, started_at: t(-50) }] },
    events: [],
    judgement: judged('success', null, 20_000),
  },
  {
    name: 'restarts a run whose id is started again',
    state: running([[A, -50]]),
    input: ping('start', t(-20), A),
    now: t(-20),
    expect: { runs: [{ rid: A, started_at: t(-20) }] },
    events: 'any',
  },
  {
    name: 'measures runs longer than a day (no cap)',
    state: running([[A, -3 * 86_400]], { max_duration: 4 * 86_400 }),
    input: ping('success', t(0), A),
    now: t(0),
    expect: { status: 'up' },
    events: [],
    judgement: judged('success', null, 3 * 86_400_000),
  },
  {
    name: `keeps at most ${MAX_OPEN_RUNS} runs with ids open, forgetting the oldest`,
    state: running(
      Array.from({ length: MAX_OPEN_RUNS }, (_, i) => [`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, -100 + i]),
      { max_duration: 3600 },
    ),
    input: ping('start', t(-10), A),
    now: t(-10),
    expect: {},
    events: 'any',
  },
  // Run-time limit.
  {
    name: 'lets a run outlast the grace period when max_duration is longer',
    state: running([[null, -10]], { max_duration: 3600 }),
    input: tick,
    now: t(120),
    expect: { status: 'running' },
    events: [],
    deadline: new Date(t(3590).getTime() + 1),
  },
  {
    name: 'goes down too_long once a run passes max_duration',
    state: running([[null, -10]], { max_duration: 3600 }),
    input: tick,
    now: new Date(t(3590).getTime() + 1),
    expect: { status: 'down', started_at: null, runs: [], down_since: t(3590) },
    events: [down('too_long', t(3590))],
    deadline: null,
  },
  {
    name: 'goes down start_timeout after the grace period with no max_duration',
    state: running([[A, -10]]),
    input: tick,
    now: new Date(t(50).getTime() + 1),
    expect: { status: 'down', runs: [] },
    events: [down('start_timeout', t(50))],
  },
  {
    name: 'times runs with ids from the earliest open one',
    state: running(
      [
        [A, -100],
        [B, -10],
      ],
      { max_duration: 300 },
    ),
    input: tick,
    now: t(0),
    expect: { status: 'running' },
    events: [],
    deadline: new Date(t(200).getTime() + 1),
  },
  // Too short.
  {
    name: 'fails a success whose run was shorter than min_duration (too_short)',
    state: running([[null, -5]], { min_duration: 60 }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'down', down_since: t(0), failed_runs: 1, last_success_at: t(-3600), next_ping_at: t(3600) },
    events: [down('too_short', t(0))],
    judgement: judged('fail', 'too_short', 5_000),
  },
  {
    name: 'takes a run of exactly min_duration as long enough',
    state: running([[null, -60]], { min_duration: 60 }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up', last_success_at: t(0) },
    events: [],
    judgement: judged('success', null, 60_000),
  },
  {
    name: 'cannot judge a success with no /start by min_duration',
    state: hb({ min_duration: 60 }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up' },
    events: [],
    judgement: judged('success', null, null),
  },
  // Too frequent.
  {
    name: 'fails a success sooner than too_frequent_ratio x period after the previous one',
    state: hb({ too_frequent_ratio: 0.5, last_success_at: t(-1000) }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'down', last_success_at: t(-1000) },
    events: [down('too_frequent', t(0))],
    judgement: judged('fail', 'too_frequent', null),
  },
  {
    name: 'takes a success at exactly the fraction as on time',
    state: hb({ too_frequent_ratio: 0.5, last_success_at: t(-1800) }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up', last_success_at: t(0) },
    events: [],
    judgement: judged('success', null, null),
  },
  {
    name: 'measures a cron schedule by the gap between its runs (hourly: 10 minutes is too frequent at 0.5)',
    state: hb({ cron_schedule: '0 * * * *', period: null, too_frequent_ratio: 0.5, last_success_at: t(0) }),
    input: ping('success', t(600)),
    now: t(600),
    expect: { status: 'down' },
    events: [down('too_frequent', t(600))],
  },
  {
    name: 'measures a cron schedule by the gap between its runs (hourly: 40 minutes is fine at 0.5)',
    state: hb({ cron_schedule: '0 * * * *', period: null, too_frequent_ratio: 0.5, last_success_at: t(0) }),
    input: ping('success', t(2400)),
    now: t(2400),
    expect: { status: 'up' },
    events: [],
  },
  {
    name: 'cannot judge the first success ever as too frequent',
    state: hb({ too_frequent_ratio: 0.9, last_success_at: null, status: 'new', last_ping_at: null, last_ping_kind: null }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up' },
    events: [],
  },
  {
    name: 'does not judge a failure as too frequent (a retry after a failure is not)',
    state: hb({ too_frequent_ratio: 0.5, last_success_at: t(-10), alert_after_failures: 2 }),
    input: ping('fail', t(0)),
    now: t(0),
    expect: { status: 'up', failed_runs: 1 },
    events: [],
    judgement: judged('fail', 'failed', null),
  },
  // Failure tolerance.
  {
    name: 'tolerates a failed run below alert_after_failures: up, counted, next_ping_at moved',
    state: hb({ alert_after_failures: 3 }),
    input: ping('fail', t(0)),
    now: t(0),
    expect: { status: 'up', failed_runs: 1, next_ping_at: t(3600), down_since: null },
    events: [],
    judgement: judged('fail', 'failed', null),
  },
  {
    name: 'goes down at the alert_after_failures-th failed run in a row',
    state: hb({ alert_after_failures: 3, failed_runs: 2 }),
    input: ping('fail', t(0)),
    now: t(0),
    expect: { status: 'down', failed_runs: 3, down_since: t(0) },
    events: [down('failed', t(0))],
  },
  {
    name: 'counts anew after a success',
    state: hb({ alert_after_failures: 3, failed_runs: 2 }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up', failed_runs: 0 },
    events: [],
  },
  {
    name: 'counts a too-short run as a failed run under tolerance',
    state: running([[null, -5]], { alert_after_failures: 2, min_duration: 60 }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'up', failed_runs: 1, started_at: null },
    events: [],
    judgement: judged('fail', 'too_short', 5_000),
  },
  {
    name: 'stays down without a second alert on a failure while down',
    state: hb({ alert_after_failures: 3, failed_runs: 3, status: 'down', down_since: t(-100) }),
    input: ping('fail', t(0)),
    now: t(0),
    expect: { status: 'down', failed_runs: 4, down_since: t(-100) },
    events: [],
  },
  {
    name: 'never tolerates silence: a miss goes down whatever alert_after_failures says',
    state: hb({ alert_after_failures: 5, status: 'late' }),
    input: tick,
    now: new Date(t(60).getTime() + 1),
    expect: { status: 'down' },
    events: [down('missed', t(60))],
  },
  {
    name: 'keeps reading running after a tolerated failure while another run is open',
    state: running(
      [
        [A, -50],
        [B, -40],
      ],
      { alert_after_failures: 2 },
    ),
    input: ping('fail', t(0), A),
    now: t(0),
    expect: { status: 'running', failed_runs: 1, runs: [{ rid: B, started_at: t(-40) }] },
    events: [],
    judgement: judged('fail', 'failed', 50_000),
  },
  // Output.
  {
    name: 'goes down with reason output when an output rule failed the run',
    state: up,
    input: ping('fail', t(0), null, 'output'),
    now: t(0),
    expect: { status: 'down' },
    events: [down('output', t(0))],
    judgement: judged('fail', 'output', null),
  },
  // Paused.
  {
    name: 'records a paused heartbeat’s success without changing its status',
    state: hb({ status: 'paused', active: false, too_frequent_ratio: 0.5, last_success_at: t(-3600) }),
    input: ping('success', t(0)),
    now: t(0),
    expect: { status: 'paused', last_success_at: t(0), next_ping_at: t(3600) },
    events: [],
  },
];

describe('heartbeat run rules', () => {
  for (const row of rows) {
    it(row.name, () => {
      const { state, effects } = nextState(row.state, row.input, row.now);
      for (const [key, value] of Object.entries(row.expect)) {
        assert.deepEqual(state[key as keyof HeartbeatState], value, key);
      }
      if (row.events !== 'any') assert.deepEqual(effects.events, row.events);
      if (row.judgement) assert.deepEqual(effects.judgement, row.judgement);
      if (row.deadline !== undefined) assert.deepEqual(effects.deadline, row.deadline);
      if (row.input.type !== 'ping') assert.equal(effects.judgement, undefined);
    });
  }

  it(`forgets the oldest run with an id beyond ${MAX_OPEN_RUNS}`, () => {
    const row = rows.find((r) => r.name.startsWith('keeps at most'))!;
    const { state } = nextState(row.state, row.input, row.now);
    assert.equal(state.runs.length, MAX_OPEN_RUNS);
    assert.equal(state.runs.at(-1)!.rid, A);
    assert.ok(!state.runs.some((r) => r.rid === row.state.runs[0]!.rid), 'the oldest is gone');
    assert.equal(state.runs[0]!.rid, row.state.runs[1]!.rid);
  });
});
