import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { degradedChange, type DegradedChange, type DegradedState } from '../../control-plane/src/monitors/incidents/degraded.ts';
import { evaluateMonitor, type MonitorHealth, type RegionVote } from '../../control-plane/src/monitors/status.ts';

const t0 = Date.parse('2026-11-26T12:00:00Z');
const minute = 60_000;
const now = new Date(t0 + 5 * minute);
const slow = 'Expected response_time less than 500, got 812';
/** A region's latest vote at `slot` (minutes after t0); degraded since `since` (a slot) when given. */
const vote = (region: string, state: 'ok' | 'slow' | 'fail', slot = 4, since?: number): RegionVote => ({
  region,
  ok: state !== 'fail',
  scheduledAt: new Date(t0 + slot * minute),
  error: state === 'fail' ? 'HTTP 503' : null,
  degraded: state === 'slow',
  degradedSince: state === 'slow' ? new Date(t0 + (since ?? slot) * minute) : null,
  degradedReason: state === 'slow' ? slow : null,
});
const iso = (slot: number) => new Date(t0 + slot * minute).toISOString();

describe('degraded periods', () => {
  // [name, status, votes, quorum, confirm_down, open state, expected change]
  const rows: [string, MonitorHealth, RegionVote[], number | null, number, DegradedState, DegradedChange | null][] = [
    ['every region healthy: nothing', 1, [vote('eu', 'ok'), vote('us', 'ok'), vote('ap', 'ok')], null, 1, null, null],
    [
      'one slow region of three (below the majority): not degraded',
      1,
      [vote('eu', 'slow'), vote('us', 'ok'), vote('ap', 'ok')],
      null,
      1,
      null,
      null,
    ],
    [
      'two slow regions of three: opens, dated from the earliest, the first reason as cause',
      1,
      [vote('eu', 'slow', 4, 3), vote('us', 'slow', 4, 4), vote('ap', 'ok')],
      null,
      1,
      null,
      { type: 'open', started_at: iso(3), regions: ['eu', 'us'], cause: slow },
    ],
    [
      'one slow and one failing of three (fewer failing than the quorum): degraded, not down',
      1,
      [vote('eu', 'slow'), vote('us', 'fail'), vote('ap', 'ok')],
      null,
      1,
      null,
      { type: 'open', started_at: iso(4), regions: ['eu'], cause: slow },
    ],
    [
      'a single region that is slow, quorum 1: opens',
      1,
      [vote('eu', 'slow')],
      1,
      1,
      null,
      { type: 'open', started_at: iso(4), regions: ['eu'], cause: slow },
    ],
    ['confirm_down 3: slow for two rounds only is not confirmed yet (nothing changes)', 1, [vote('eu', 'slow', 4, 3)], 1, 3, null, null],
    [
      'confirm_down 3: slow for three rounds opens, dated from the first',
      1,
      [vote('eu', 'slow', 4, 2)],
      1,
      3,
      null,
      { type: 'open', started_at: iso(2), regions: ['eu'], cause: slow },
    ],
    [
      'open and a third region turns slow: widens',
      1,
      [vote('eu', 'slow', 4, 2), vote('us', 'slow', 4, 2), vote('ap', 'slow')],
      null,
      1,
      ['eu', 'us'],
      { type: 'widen', regions: ['ap', 'eu', 'us'] },
    ],
    ['open and still the same: nothing', 1, [vote('eu', 'slow', 4, 2), vote('us', 'slow', 4, 2)], null, 1, ['eu', 'us'], null],
    [
      'open and every region healthy again: closes at the round',
      1,
      [vote('eu', 'ok'), vote('us', 'ok'), vote('ap', 'ok')],
      null,
      1,
      ['eu', 'us'],
      { type: 'close', ended_at: iso(4) },
    ],
    [
      'open and the monitor goes down: closes (the outage is the incident now)',
      1,
      [vote('eu', 'fail'), vote('us', 'fail'), vote('ap', 'slow')],
      null,
      1,
      ['eu', 'us'],
      { type: 'close', ended_at: iso(4) },
    ],
    ['a down monitor still failing is not degraded', 2, [vote('eu', 'fail'), vote('us', 'fail'), vote('ap', 'slow')], null, 1, null, null],
    [
      'a down monitor that comes back up slow: up and degraded',
      2,
      [vote('eu', 'slow'), vote('us', 'slow')],
      null,
      1,
      null,
      { type: 'open', started_at: iso(4), regions: ['eu', 'us'], cause: slow },
    ],
    [
      'a pending monitor whose first round is slow: up and degraded',
      0,
      [vote('eu', 'slow')],
      null,
      1,
      null,
      { type: 'open', started_at: iso(4), regions: ['eu'], cause: slow },
    ],
  ];
  for (const [name, status, votes, quorum, confirmDown, open, expected] of rows) {
    it(name, () => {
      const e = evaluateMonitor(status, votes, now, 600_000, { quorum, confirmDown: 1, confirmUp: 1 });
      assert.deepEqual(degradedChange(e, votes, open, { confirmDown, intervalMs: minute }, now), expected);
    });
  }
});
