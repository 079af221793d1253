import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialState,
  nextState,
  type HeartbeatEvent,
  type HeartbeatInput,
  type HeartbeatState,
  type NewHeartbeat,
  type PingKind,
} from '../../control-plane/src/heartbeats/state.ts';

// T0 = 2026-03-10T12:00:00Z; t(s, ms) is that many seconds (and milliseconds) later.
const T0 = Date.parse('2026-03-10T12:00:00.000Z');
const t = (seconds: number, ms = 0): Date => new Date(T0 + seconds * 1000 + ms);

// Up, pinged an hour ago, next ping due at T0, grace 60 s, period 1 h.
const up: HeartbeatState = {
  status: 'up',
  next_ping_at: t(0),
  last_ping_at: t(-3600),
  last_ping_kind: 'success',
  started_at: null,
  down_since: null,
  grace_period: 60,
  cron_schedule: null,
  timezone: 'UTC',
  period: 3600,
  active: true,
  runs: [],
  last_success_at: null,
  failed_runs: 0,
  max_duration: null,
  min_duration: null,
  too_frequent_ratio: null,
  alert_after_failures: 1,
};
const hb = (overrides: Partial<HeartbeatState>): HeartbeatState => ({ ...up, ...overrides });
const fresh = hb({ status: 'new', last_ping_at: null, last_ping_kind: null });
const late = hb({ status: 'late' });
const down = hb({ status: 'down', down_since: t(60) });
const running = hb({ status: 'running', started_at: t(-10), last_ping_at: t(-10), last_ping_kind: 'start' });
const paused = hb({ status: 'paused', active: false });

const tick: HeartbeatInput = { type: 'tick' };
const ping = (kind: PingKind, at: Date): HeartbeatInput => ({ type: 'ping', kind, at });
const config = (changes: Extract<HeartbeatInput, { type: 'config' }>['changes']): HeartbeatInput => ({
  type: 'config',
  changes,
});
const event = (type: HeartbeatEvent['type'], reason: HeartbeatEvent['reason'], at: Date): HeartbeatEvent => ({
  type,
  reason,
  at,
});

interface Row {
  name: string;
  state: HeartbeatState;
  input: HeartbeatInput;
  now: Date;
  /** Fields of the resulting state to check, or 'unchanged' for exactly the input state. */
  expect: Partial<HeartbeatState> | 'unchanged';
  events: HeartbeatEvent[];
  deadline: Date | null;
}

const rows: Row[] = [
  // Watching: late and down boundaries.
  {
    name: 'keeps an up heartbeat up at exactly next_ping_at',
    state: up,
    input: tick,
    now: t(0),
    expect: { status: 'up' },
    events: [],
    deadline: t(0, 1),
  },
  {
    name: 'marks the heartbeat late 1 ms after next_ping_at',
    state: up,
    input: tick,
    now: t(0, 1),
    expect: { status: 'late' },
    events: [event('heartbeat.late', 'missed', t(0))],
    deadline: t(60, 1),
  },
  {
    name: 'marks the heartbeat late 1 s after next_ping_at',
    state: up,
    input: tick,
    now: t(1),
    expect: { status: 'late' },
    events: [event('heartbeat.late', 'missed', t(0))],
    deadline: t(60, 1),
  },
  {
    name: 'keeps a late heartbeat late at exactly next_ping_at + grace',
    state: late,
    input: tick,
    now: t(60),
    expect: { status: 'late' },
    events: [],
    deadline: t(60, 1),
  },
  {
    name: 'marks the heartbeat down when grace runs out (1 ms after)',
    state: late,
    input: tick,
    now: t(60, 1),
    expect: { status: 'down', down_since: t(60) },
    events: [event('heartbeat.down', 'missed', t(60))],
    deadline: null,
  },
  {
    name: 'marks the heartbeat down 1 s after grace runs out',
    state: late,
    input: tick,
    now: t(61),
    expect: { status: 'down', down_since: t(60) },
    events: [event('heartbeat.down', 'missed', t(60))],
    deadline: null,
  },
  {
    name: 'uses the heartbeat grace period for the down boundary',
    state: hb({ status: 'late', grace_period: 300 }),
    input: tick,
    now: t(300),
    expect: { status: 'late' },
    events: [],
    deadline: t(300, 1),
  },
  {
    name: 'marks the heartbeat down 1 ms after a longer grace runs out',
    state: hb({ status: 'late', grace_period: 300 }),
    input: tick,
    now: t(300, 1),
    expect: { status: 'down' },
    events: [event('heartbeat.down', 'missed', t(300))],
    deadline: null,
  },
  {
    name: 'does not repeat heartbeat.late while late',
    state: late,
    input: tick,
    now: t(30),
    expect: { status: 'late' },
    events: [],
    deadline: t(60, 1),
  },
  {
    name: 'goes from up straight to down when the tick comes after the grace',
    state: up,
    input: tick,
    now: t(3600),
    expect: { status: 'down', down_since: t(60) },
    events: [event('heartbeat.down', 'missed', t(60))],
    deadline: null,
  },
  {
    name: 'watches a new heartbeat before its first ping: late',
    state: fresh,
    input: tick,
    now: t(1),
    expect: { status: 'late' },
    events: [event('heartbeat.late', 'missed', t(0))],
    deadline: t(60, 1),
  },
  {
    name: 'watches a new heartbeat before its first ping: down',
    state: hb({ ...fresh, status: 'late' }),
    input: tick,
    now: t(61),
    expect: { status: 'down' },
    events: [event('heartbeat.down', 'missed', t(60))],
    deadline: null,
  },
  {
    name: 'leaves a new heartbeat without next_ping_at alone',
    state: hb({ ...fresh, next_ping_at: null }),
    input: tick,
    now: t(100000),
    expect: { status: 'new' },
    events: [],
    deadline: null,
  },
  {
    name: 'keeps a down heartbeat down on ticks, silently',
    state: down,
    input: tick,
    now: t(100000),
    expect: { status: 'down', down_since: t(60) },
    events: [],
    deadline: null,
  },

  // Success pings.
  {
    name: 'marks a late heartbeat up on success without an event',
    state: late,
    input: ping('success', t(30)),
    now: t(30),
    expect: { status: 'up', last_ping_at: t(30), last_ping_kind: 'success', next_ping_at: t(3630) },
    events: [],
    deadline: t(3630, 1),
  },
  {
    name: 'marks a new heartbeat up on its first success without an event',
    state: fresh,
    input: ping('success', t(-30)),
    now: t(-30),
    expect: { status: 'up', next_ping_at: t(3570) },
    events: [],
    deadline: t(3570, 1),
  },
  {
    name: 'recovers a down heartbeat and emits heartbeat.up',
    state: down,
    input: ping('success', t(200)),
    now: t(200),
    expect: { status: 'up', down_since: null, next_ping_at: t(3800) },
    events: [event('heartbeat.up', 'ping', t(200))],
    deadline: t(3800, 1),
  },
  {
    name: 'sets next_ping_at to the next cron occurrence after the ping',
    state: hb({ cron_schedule: '0 * * * *', period: null }),
    input: ping('success', t(30)),
    now: t(30),
    expect: { status: 'up', next_ping_at: t(3600) },
    events: [],
    deadline: t(3600, 1),
  },
  {
    name: 'computes the next cron occurrence in the heartbeat time zone',
    state: hb({ status: 'late', cron_schedule: '0 9 * * *', timezone: 'America/New_York', period: null, next_ping_at: t(3600) }),
    input: ping('success', t(3620)),
    now: t(3620),
    expect: { status: 'up', next_ping_at: new Date('2026-03-11T13:00:00Z') },
    events: [],
    deadline: new Date('2026-03-11T13:00:00.001Z'),
  },
  {
    name: 'stops watching an explicit-only heartbeat after its ping',
    state: hb({ period: null }),
    input: ping('success', t(-5)),
    now: t(-5),
    expect: { status: 'up', next_ping_at: null },
    events: [],
    deadline: null,
  },
  {
    name: 'goes late at once when a ping is processed after its next deadline passed',
    state: up,
    input: ping('success', t(0)),
    now: t(3600, 1),
    expect: { status: 'late', next_ping_at: t(3600) },
    events: [event('heartbeat.late', 'missed', t(3600))],
    deadline: t(3660, 1),
  },

  // Start pings and runs.
  {
    name: 'marks the heartbeat running on /start and emits heartbeat.started',
    state: up,
    input: ping('start', t(-10)),
    now: t(-10),
    expect: { status: 'running', started_at: t(-10), next_ping_at: t(0), last_ping_kind: 'start' },
    events: [event('heartbeat.started', 'ping', t(-10))],
    deadline: t(50, 1),
  },
  {
    name: 'clears lateness when the job starts',
    state: late,
    input: ping('start', t(30)),
    now: t(30),
    expect: { status: 'running', started_at: t(30) },
    events: [event('heartbeat.started', 'ping', t(30))],
    deadline: t(90, 1),
  },
  {
    name: 'keeps a run going at exactly started_at + grace',
    state: running,
    input: tick,
    now: t(50),
    expect: { status: 'running' },
    events: [],
    deadline: t(50, 1),
  },
  {
    name: 'marks a run down with start_timeout 1 ms after its grace',
    state: running,
    input: tick,
    now: t(50, 1),
    expect: { status: 'down', started_at: null, down_since: t(50) },
    events: [event('heartbeat.down', 'start_timeout', t(50))],
    deadline: null,
  },
  {
    name: 'marks a run down with start_timeout 1 s after its grace',
    state: running,
    input: tick,
    now: t(51),
    expect: { status: 'down' },
    events: [event('heartbeat.down', 'start_timeout', t(50))],
    deadline: null,
  },
  {
    name: 'applies only the start timeout while running, not next_ping_at',
    state: hb({ status: 'running', started_at: t(30), last_ping_at: t(30), last_ping_kind: 'start' }),
    input: tick,
    now: t(80),
    expect: { status: 'running' },
    events: [],
    deadline: t(90, 1),
  },
  {
    name: 'marks a run up when it succeeds, silently',
    state: running,
    input: ping('success', t(20)),
    now: t(20),
    expect: { status: 'up', started_at: null, next_ping_at: t(3620) },
    events: [],
    deadline: t(3620, 1),
  },
  {
    name: 'marks a run down when it fails',
    state: running,
    input: ping('fail', t(20)),
    now: t(20),
    expect: { status: 'down', started_at: null, down_since: t(20), next_ping_at: t(3620) },
    events: [event('heartbeat.down', 'failed', t(20))],
    deadline: null,
  },
  {
    name: 'restarts the timeout on a second /start and emits heartbeat.started again',
    state: running,
    input: ping('start', t(20)),
    now: t(20),
    expect: { status: 'running', started_at: t(20) },
    events: [event('heartbeat.started', 'ping', t(20))],
    deadline: t(80, 1),
  },
  {
    name: 'runs a down heartbeat on /start without ending the down period',
    state: down,
    input: ping('start', t(200)),
    now: t(200),
    expect: { status: 'running', started_at: t(200), down_since: t(60) },
    events: [event('heartbeat.started', 'ping', t(200))],
    deadline: t(260, 1),
  },
  {
    name: 'does not announce down again when a run started while down times out',
    state: hb({ status: 'running', started_at: t(200), down_since: t(60), last_ping_at: t(200), last_ping_kind: 'start' }),
    input: tick,
    now: t(260, 1),
    expect: { status: 'down', down_since: t(60), started_at: null },
    events: [],
    deadline: null,
  },
  {
    name: 'announces recovery when a run started while down succeeds',
    state: hb({ status: 'running', started_at: t(200), down_since: t(60), last_ping_at: t(200), last_ping_kind: 'start' }),
    input: ping('success', t(230)),
    now: t(230),
    expect: { status: 'up', down_since: null, started_at: null },
    events: [event('heartbeat.up', 'ping', t(230))],
    deadline: t(3830, 1),
  },

  // Fail pings.
  {
    name: 'marks an up heartbeat down at once on /fail',
    state: up,
    input: ping('fail', t(-5)),
    now: t(-5),
    expect: { status: 'down', down_since: t(-5), next_ping_at: t(3595), last_ping_kind: 'fail' },
    events: [event('heartbeat.down', 'failed', t(-5))],
    deadline: null,
  },
  {
    name: 'marks a new heartbeat down at once on /fail',
    state: fresh,
    input: ping('fail', t(-5)),
    now: t(-5),
    expect: { status: 'down', down_since: t(-5) },
    events: [event('heartbeat.down', 'failed', t(-5))],
    deadline: null,
  },
  {
    name: 'marks a late heartbeat down at once on /fail',
    state: late,
    input: ping('fail', t(30)),
    now: t(30),
    expect: { status: 'down', down_since: t(30) },
    events: [event('heartbeat.down', 'failed', t(30))],
    deadline: null,
  },
  {
    name: 'emits nothing for a second /fail while down',
    state: down,
    input: ping('fail', t(300)),
    now: t(300),
    expect: { status: 'down', down_since: t(60), last_ping_at: t(300) },
    events: [],
    deadline: null,
  },

  // Replayed and out-of-order pings.
  {
    name: 'changes nothing when a success ping is replayed',
    state: hb({ last_ping_at: t(30), next_ping_at: t(3630) }),
    input: ping('success', t(30)),
    now: t(40),
    expect: 'unchanged',
    events: [],
    deadline: t(3630, 1),
  },
  {
    name: 'changes nothing when a /fail is replayed after the heartbeat went down',
    state: hb({ status: 'down', down_since: t(20), last_ping_at: t(20), last_ping_kind: 'fail' }),
    input: ping('fail', t(20)),
    now: t(25),
    expect: 'unchanged',
    events: [],
    deadline: null,
  },
  {
    name: 'changes nothing when a /start is replayed',
    state: running,
    input: ping('start', t(-10)),
    now: t(-5),
    expect: 'unchanged',
    events: [],
    deadline: t(50, 1),
  },
  {
    name: 'ignores a ping older than the last one',
    state: hb({ last_ping_at: t(10), next_ping_at: t(3610) }),
    input: ping('fail', t(5)),
    now: t(12),
    expect: 'unchanged',
    events: [],
    deadline: t(3610, 1),
  },
  {
    name: 'applies a completion in the same millisecond as its /start',
    state: running,
    input: ping('success', t(-10)),
    now: t(-10),
    expect: { status: 'up', started_at: null, last_ping_kind: 'success', next_ping_at: t(3590) },
    events: [],
    deadline: t(3590, 1),
  },
  {
    name: 'ignores a /start in the same millisecond as a completion already applied',
    state: hb({ last_ping_at: t(10), next_ping_at: t(3610) }),
    input: ping('start', t(10)),
    now: t(10),
    expect: 'unchanged',
    events: [],
    deadline: t(3610, 1),
  },

  // Paused.
  {
    name: 'raises nothing and arms nothing while paused',
    state: paused,
    input: tick,
    now: t(100000),
    expect: { status: 'paused' },
    events: [],
    deadline: null,
  },
  {
    name: 'records a success ping while paused without a status change',
    state: paused,
    input: ping('success', t(10)),
    now: t(10),
    expect: { status: 'paused', last_ping_at: t(10), next_ping_at: t(3610) },
    events: [],
    deadline: null,
  },
  {
    name: 'does not raise on a /fail while paused',
    state: paused,
    input: ping('fail', t(10)),
    now: t(10),
    expect: { status: 'paused', down_since: null, last_ping_kind: 'fail' },
    events: [],
    deadline: null,
  },
  {
    name: 'does not start a run while paused',
    state: paused,
    input: ping('start', t(10)),
    now: t(10),
    expect: { status: 'paused', started_at: null, next_ping_at: t(0) },
    events: [],
    deadline: null,
  },
  {
    name: 'pauses a late heartbeat silently',
    state: late,
    input: config({ active: false }),
    now: t(30),
    expect: { status: 'paused', active: false },
    events: [],
    deadline: null,
  },
  {
    name: 'pauses a running heartbeat and drops the run',
    state: running,
    input: config({ active: false }),
    now: t(30),
    expect: { status: 'paused', started_at: null },
    events: [],
    deadline: null,
  },
  {
    name: 'keeps the down period open through a pause',
    state: down,
    input: config({ active: false }),
    now: t(300),
    expect: { status: 'paused', down_since: t(60) },
    events: [],
    deadline: null,
  },
  {
    name: 'resumes with next_ping_at recomputed from now when it passed during the pause',
    state: paused,
    input: config({ active: true }),
    now: t(7200),
    expect: { status: 'up', active: true, next_ping_at: t(10800) },
    events: [],
    deadline: t(10800, 1),
  },
  {
    name: 'resumes with a future next_ping_at kept',
    state: paused,
    input: config({ active: true }),
    now: t(-100),
    expect: { status: 'up', next_ping_at: t(0) },
    events: [],
    deadline: t(0, 1),
  },
  {
    name: 'resumes a cron heartbeat at the next occurrence after now',
    state: hb({ status: 'paused', active: false, cron_schedule: '0 * * * *', period: null }),
    input: config({ active: true }),
    now: t(7230),
    expect: { status: 'up', next_ping_at: t(10800) },
    events: [],
    deadline: t(10800, 1),
  },
  {
    name: 'watches a resumed explicit-only heartbeat against its past next_ping_at at once',
    state: hb({ status: 'paused', active: false, period: null }),
    input: config({ active: true }),
    now: t(30),
    expect: { status: 'late', next_ping_at: t(0) },
    events: [event('heartbeat.late', 'missed', t(0))],
    deadline: t(60, 1),
  },
  {
    name: 'resumes a heartbeat that was down as down, silently',
    state: hb({ status: 'paused', active: false, down_since: t(60) }),
    input: config({ active: true }),
    now: t(500),
    expect: { status: 'down', down_since: t(60), next_ping_at: t(4100) },
    events: [],
    deadline: null,
  },
  {
    name: 'resumes a never-pinged heartbeat as new',
    state: hb({ status: 'paused', active: false, last_ping_at: null, last_ping_kind: null, next_ping_at: null, period: null }),
    input: config({ active: true }),
    now: t(500),
    expect: { status: 'new' },
    events: [],
    deadline: null,
  },

  // Config changes.
  {
    name: 'moves a late heartbeat back to up when next_ping_at moves into the future',
    state: late,
    input: config({ next_ping_at: t(500) }),
    now: t(30),
    expect: { status: 'up', next_ping_at: t(500) },
    events: [],
    deadline: t(500, 1),
  },
  {
    name: 'moves a late never-pinged heartbeat back to new',
    state: hb({ ...fresh, status: 'late' }),
    input: config({ next_ping_at: t(500) }),
    now: t(30),
    expect: { status: 'new' },
    events: [],
    deadline: t(500, 1),
  },
  {
    name: 'marks an up heartbeat late at once when next_ping_at moves into the past',
    state: hb({ next_ping_at: t(100) }),
    input: config({ next_ping_at: t(10) }),
    now: t(30),
    expect: { status: 'late' },
    events: [event('heartbeat.late', 'missed', t(10))],
    deadline: t(70, 1),
  },
  {
    name: 'marks a late heartbeat down at once when grace shrinks below the overdue time',
    state: hb({ status: 'late', grace_period: 600 }),
    input: config({ grace_period: 60 }),
    now: t(90),
    expect: { status: 'down', down_since: t(60) },
    events: [event('heartbeat.down', 'missed', t(60))],
    deadline: null,
  },
  {
    name: 'keeps a late heartbeat late, silently, when grace grows',
    state: hb({ status: 'late', grace_period: 600 }),
    input: config({ grace_period: 900 }),
    now: t(90),
    expect: { status: 'late', grace_period: 900 },
    events: [],
    deadline: t(900, 1),
  },
  {
    name: 'starts watching a new heartbeat when next_ping_at is set',
    state: hb({ ...fresh, next_ping_at: null, period: null }),
    input: config({ next_ping_at: t(100) }),
    now: t(0),
    expect: { status: 'new', next_ping_at: t(100) },
    events: [],
    deadline: t(100, 1),
  },
  {
    name: 'stops watching when next_ping_at is cleared',
    state: late,
    input: config({ next_ping_at: null }),
    now: t(30),
    expect: { status: 'up', next_ping_at: null },
    events: [],
    deadline: null,
  },
  {
    name: 'recomputes next_ping_at from now when the cron schedule changes',
    state: up,
    input: config({ cron_schedule: '*/15 * * * *' }),
    now: t(-3300),
    expect: { status: 'up', next_ping_at: t(-2700) },
    events: [],
    deadline: t(-2700, 1),
  },
  {
    name: 'lets an explicit next_ping_at win over a schedule change',
    state: up,
    input: config({ cron_schedule: '*/15 * * * *', next_ping_at: t(5000) }),
    now: t(-3300),
    expect: { next_ping_at: t(5000) },
    events: [],
    deadline: t(5000, 1),
  },
  {
    name: 'does not move next_ping_at when the same schedule is sent again',
    state: hb({ cron_schedule: '0 * * * *', period: null }),
    input: config({ cron_schedule: '0 * * * *', grace_period: 60 }),
    now: t(-1800),
    expect: { next_ping_at: t(0) },
    events: [],
    deadline: t(0, 1),
  },
  {
    name: 'recomputes next_ping_at when the time zone of a cron schedule changes',
    state: hb({ cron_schedule: '0 12 * * *', period: null }),
    input: config({ timezone: 'Europe/Berlin' }),
    now: t(-7200),
    expect: { timezone: 'Europe/Berlin', next_ping_at: t(-3600) },
    events: [],
    deadline: t(-3600, 1),
  },
  {
    name: 'recomputes next_ping_at from now when the period changes',
    state: up,
    input: config({ period: 600 }),
    now: t(-100),
    expect: { period: 600, next_ping_at: t(500) },
    events: [],
    deadline: t(500, 1),
  },
  {
    name: 'keeps next_ping_at when the schedule is removed',
    state: hb({ cron_schedule: '0 * * * *', period: null }),
    input: config({ cron_schedule: null }),
    now: t(-100),
    expect: { cron_schedule: null, next_ping_at: t(0) },
    events: [],
    deadline: t(0, 1),
  },
  {
    name: 'treats an undefined change as no change',
    state: up,
    input: config({ next_ping_at: undefined, period: undefined }),
    now: t(-100),
    expect: 'unchanged',
    events: [],
    deadline: t(0, 1),
  },
  {
    name: 'never ends a down period by config',
    state: down,
    input: config({ next_ping_at: t(5000) }),
    now: t(200),
    expect: { status: 'down', down_since: t(60), next_ping_at: t(5000) },
    events: [],
    deadline: null,
  },
  {
    name: 'moves the start timeout when grace changes while running',
    state: hb({ status: 'running', started_at: t(-100), grace_period: 300, last_ping_at: t(-100), last_ping_kind: 'start' }),
    input: config({ grace_period: 120 }),
    now: t(30),
    expect: { status: 'down', down_since: t(20) },
    events: [event('heartbeat.down', 'start_timeout', t(20))],
    deadline: null,
  },
];

describe('nextState', () => {
  for (const row of rows) {
    it(row.name, () => {
      const before = structuredClone(row.state);
      const { state, effects } = nextState(row.state, row.input, row.now);
      if (row.expect === 'unchanged') {
        assert.deepEqual(state, row.state);
      } else {
        const actual = Object.fromEntries(Object.keys(row.expect).map((key) => [key, state[key as keyof HeartbeatState]]));
        assert.deepEqual(actual, row.expect);
      }
      assert.deepEqual(effects.events, row.events);
      assert.deepEqual(effects.deadline, row.deadline);
      assert.deepEqual(row.state, before, 'the input state is not mutated');
      assert.equal(state.status === 'paused', !state.active, 'paused exactly when inactive');
    });
  }
});

describe('nextState invariants over every row', () => {
  it('arms a deadline at which a tick changes the status, and not 1 ms earlier', () => {
    for (const row of rows) {
      const { state, effects } = nextState(row.state, row.input, row.now);
      if (!effects.deadline) continue;
      const early = nextState(state, tick, new Date(effects.deadline.getTime() - 1));
      assert.deepEqual(early.state, state, `${row.name}: tick 1 ms before the deadline`);
      assert.deepEqual(early.effects.events, [], `${row.name}: tick 1 ms before the deadline`);
      const due = nextState(state, tick, effects.deadline);
      assert.notEqual(due.state.status, state.status, `${row.name}: tick at the deadline`);
    }
  });

  it('never arms a deadline at or before now', () => {
    for (const row of rows) {
      const { effects } = nextState(row.state, row.input, row.now);
      if (effects.deadline) assert.ok(effects.deadline > row.now, row.name);
    }
  });

  it('changes nothing when the same ping is delivered twice', () => {
    for (const row of rows.filter((r) => r.input.type === 'ping')) {
      const first = nextState(row.state, row.input, row.now);
      const again = nextState(first.state, row.input, row.now);
      assert.deepEqual(again.state, first.state, row.name);
      assert.deepEqual(again.effects.events, [], row.name);
    }
  });

  it('emits heartbeat.down once per down period, however the down period is reached', () => {
    const inputs: Array<[HeartbeatInput, Date]> = [
      [ping('start', t(-10)), t(-10)],
      [tick, t(51)], // start timeout: down
      [ping('fail', t(100)), t(100)],
      [ping('start', t(200)), t(200)],
      [tick, t(261)], // start timeout again, same down period
      [config({ active: false }), t(300)],
      [config({ active: true }), t(400)],
      [ping('fail', t(500)), t(500)],
      [ping('success', t(600)), t(600)], // recovery
      [tick, t(4261)], // missed: a new down period
    ];
    let state = up;
    const types: string[] = [];
    for (const [input, now] of inputs) {
      const result = nextState(state, input, now);
      state = result.state;
      types.push(...result.effects.events.map((e) => `${e.type}:${e.reason}`));
    }
    assert.deepEqual(types, [
      'heartbeat.started:ping',
      'heartbeat.down:start_timeout',
      'heartbeat.started:ping',
      'heartbeat.up:ping',
      'heartbeat.down:missed',
    ]);
  });
});

describe('initialState', () => {
  const now = t(0);
  const cases: Array<[name: string, heartbeat: NewHeartbeat, expect: Partial<HeartbeatState>]> = [
    [
      'uses the given next_ping_at',
      { grace_period: 60, next_ping_at: t(500), cron_schedule: '0 * * * *' },
      { status: 'new', next_ping_at: t(500) },
    ],
    ['starts at the first cron occurrence after now', { grace_period: 60, cron_schedule: '*/15 * * * *' }, { next_ping_at: t(900) }],
    [
      'takes the first cron occurrence in the heartbeat time zone',
      { grace_period: 60, cron_schedule: '0 9 * * *', timezone: 'America/New_York' },
      { next_ping_at: t(3600), timezone: 'America/New_York' },
    ], // 08:00 EDT -> 09:00 EDT
    ['starts at now + period without a cron schedule', { grace_period: 60, period: 300 }, { next_ping_at: t(300) }],
    ['watches nothing with neither', { grace_period: 60 }, { next_ping_at: null, status: 'new' }],
    ['treats a null next_ping_at as not given', { grace_period: 60, next_ping_at: null, period: 300 }, { next_ping_at: t(300) }],
    ['creates an inactive heartbeat paused', { grace_period: 60, active: false }, { status: 'paused', active: false }],
    [
      'defaults the time zone to UTC and the rest to empty',
      { grace_period: 120 },
      {
        timezone: 'UTC',
        cron_schedule: null,
        period: null,
        grace_period: 120,
        last_ping_at: null,
        last_ping_kind: null,
        started_at: null,
        down_since: null,
        active: true,
      },
    ],
  ];
  for (const [name, heartbeat, expect] of cases) {
    it(name, () => {
      const state = initialState(heartbeat, now);
      const actual = Object.fromEntries(Object.keys(expect).map((key) => [key, state[key as keyof HeartbeatState]]));
      assert.deepEqual(actual, expect);
    });
  }

  it('marks a heartbeat created with a past next_ping_at late on its first tick', () => {
    const state = initialState({ grace_period: 60, next_ping_at: t(-30) }, now);
    const { state: after, effects } = nextState(state, tick, now);
    assert.equal(after.status, 'late');
    assert.deepEqual(effects.events, [event('heartbeat.late', 'missed', t(-30))]);
    assert.deepEqual(effects.deadline, t(30, 1));
  });
});
