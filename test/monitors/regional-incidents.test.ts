import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { regionalChange, type RegionalChange, type RegionalState } from '../../control-plane/src/monitors/incidents/regional.ts';
import { evaluateMonitor, type MonitorHealth, type RegionVote } from '../../control-plane/src/monitors/status.ts';

const t0 = Date.parse('2026-11-26T12:00:00Z');
const now = new Date(t0 + 5 * 60_000);
const vote = (region: string, ok: boolean, slot = 0, failingSince?: number): RegionVote => ({
  region,
  ok,
  scheduledAt: new Date(t0 + slot * 60_000),
  error: ok ? null : 'HTTP 503',
  ...(failingSince !== undefined ? { failingSince: new Date(failingSince) } : {}),
});
const iso = (slot: number) => new Date(t0 + slot * 60_000).toISOString();

describe('regional incidents', () => {
  // [name, monitor status, votes, quorum, open regional state, expected change]
  const rows: [string, MonitorHealth, RegionVote[], number | null, RegionalState, RegionalChange | null][] = [
    ['every region passes: nothing', 1, [vote('eu', true), vote('us', true), vote('ap', true)], null, null, null],
    [
      'one of three has failed for less than the grace (its region may be about to be judged degraded): not yet',
      1,
      [vote('eu', false, 4, now.getTime() - 29_000), vote('us', true, 4), vote('ap', true, 4)],
      null,
      null,
      null,
    ],
    [
      'one of three has failed for the grace: opens, dated from when it began failing',
      1,
      [vote('eu', false, 4, now.getTime() - 30_000), vote('us', true, 4), vote('ap', true, 4)],
      null,
      null,
      { type: 'open', started_at: new Date(now.getTime() - 30_000).toISOString(), regions: ['eu'], cause: 'HTTP 503' },
    ],
    [
      'one of three fails (majority quorum): opens, dated from the failing check',
      1,
      [vote('eu', false), vote('us', true), vote('ap', true)],
      null,
      null,
      { type: 'open', started_at: iso(0), regions: ['eu'], cause: 'HTTP 503' },
    ],
    [
      'one of three fails while the others have not checked that slot yet: not known, nothing',
      1,
      [vote('eu', false, 1), vote('us', true, 0), vote('ap', true, 1)],
      null,
      null,
      null,
    ],
    [
      'two of three fail: the monitor is down, no regional incident',
      1,
      [vote('eu', false), vote('us', false), vote('ap', true)],
      null,
      null,
      null,
    ],
    [
      'the monitor goes down while one is open: it closes at that round',
      1,
      [vote('eu', false, 2), vote('us', false, 2), vote('ap', true, 2)],
      null,
      ['eu'],
      { type: 'close', ended_at: iso(2) },
    ],
    [
      'another region joins below the quorum: widened',
      1,
      [vote('eu', false, 1), vote('us', false, 1), vote('ap', true, 1), vote('sa', true, 1), vote('af', true, 1)],
      3,
      ['eu'],
      { type: 'widen', regions: ['eu', 'us'] },
    ],
    ['the same region still fails: nothing', 1, [vote('eu', false, 1), vote('us', true, 1), vote('ap', true, 1)], null, ['eu'], null],
    [
      'every region passes again: closes at that round',
      1,
      [vote('eu', true, 3), vote('us', true, 3), vote('ap', true, 3)],
      null,
      ['eu'],
      { type: 'close', ended_at: iso(3) },
    ],
    ['quorum 1: one failing region is an outage, never regional', 1, [vote('eu', false), vote('us', true)], 1, null, null],
    ['a single region: never regional', 1, [vote('eu', false)], null, null, null],
  ];
  for (const [name, status, votes, quorum, open, expected] of rows) {
    it(name, () => {
      const e = evaluateMonitor(status, votes, now, 600_000, { quorum, confirmDown: 1, confirmUp: 1 });
      assert.deepEqual(regionalChange(e, votes, open, now), expected);
    });
  }
});
