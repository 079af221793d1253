import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PingLogEntry } from '../../control-plane/src/heartbeats/pings/schemas.ts';
import { buildTimeline, type StatusChange } from '../../control-plane/src/heartbeats/timeline.ts';

const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 2, 30, s)).toISOString().replace('Z', '000Z');
const ping = (kind: PingLogEntry['kind'], s: number, exit_code: number | null = null): PingLogEntry => ({
  kind,
  exit_code,
  received_at: at(s),
  region: null,
  source: '203.0.113.9',
  method: 'GET',
  user_agent: 'curl/8',
  body: '',
  body_size: 0,
  rid: null,
  outcome: null,
  reason: null,
  duration_seconds: null,
});
const change = (status: StatusChange['status'], s: number, reason: StatusChange['reason'] = 'ping'): StatusChange => ({
  status,
  reason,
  at: at(s),
});

/** The log as lines: what and when, and the run's length where there is one. */
const lines = (pings: PingLogEntry[], changes: StatusChange[], limit = 50) =>
  buildTimeline([...pings].reverse(), [...changes].reverse(), limit).map((e) =>
    e.type === 'ping'
      ? `${e.at.slice(17, 19)} ${e.kind}${e.duration === null ? '' : ` ${e.duration}s`}`
      : `${e.at.slice(17, 19)} ${e.status}`,
  );

describe("a heartbeat's event log", () => {
  const rows: [string, PingLogEntry[], StatusChange[], string[]][] = [
    // what, pings oldest first, changes oldest first, the log newest first
    ['nothing yet', [], [], []],
    ['a success without a start has no duration', [ping('success', 1)], [], ['01 success']],
    ['a start and its success: the run took 7 s', [ping('start', 1), ping('success', 8)], [], ['08 success 7s', '01 start']],
    [
      'a start and a failing exit code',
      [ping('start', 1), ping('fail', 4, 3)],
      [change('down', 4, 'failed')],
      ['04 down', '04 fail 3s', '01 start'],
    ],
    [
      'a second start replaces the first',
      [ping('start', 1), ping('start', 5), ping('success', 9)],
      [],
      ['09 success 4s', '05 start', '01 start'],
    ],
    [
      'a completion ends the run: the next success has no duration',
      [ping('start', 1), ping('success', 2), ping('success', 9)],
      [],
      ['09 success', '02 success 1s', '01 start'],
    ],
    [
      'overlapping runs: each completion takes the duration the rules measured for its own run',
      [
        ping('start', 1),
        ping('start', 3),
        { ...ping('success', 5), outcome: 'success', duration_seconds: 2 },
        { ...ping('success', 9), outcome: 'success', duration_seconds: 8 },
      ],
      [],
      ['09 success 8s', '05 success 2s', '03 start', '01 start'],
    ],
    [
      'a judged completion whose run the rules did not find has no duration, whatever came before',
      [ping('start', 1), { ...ping('success', 5), outcome: 'fail', reason: 'too_frequent' }],
      [],
      ['05 success', '01 start'],
    ],
    [
      'status changes between pings, in time order',
      [ping('success', 1), ping('success', 40)],
      [change('late', 10, 'missed'), change('down', 20, 'missed'), change('up', 40)],
      ['40 up', '40 success', '20 down', '10 late', '01 success'],
    ],
  ];
  for (const [what, pings, changes, log] of rows) {
    it(what, () => assert.deepEqual(lines(pings, changes), log));
  }

  it('keeps the newest entries up to the limit', () => {
    assert.deepEqual(lines([ping('start', 1), ping('success', 3)], [change('up', 2)], 2), ['03 success 2s', '02 up']);
  });

  it('keeps what each ping carried', () => {
    const [entry] = buildTimeline([{ ...ping('fail', 4, 3), body: 'disk full', body_size: 9 }], [], 10);
    assert.deepEqual(entry, { type: 'ping', at: at(4), duration: null, ...ping('fail', 4, 3), body: 'disk full', body_size: 9 });
  });
});
