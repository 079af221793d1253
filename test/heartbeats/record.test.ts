import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { deadlineInputsOf, stateOf, toDate, type StateRow } from '../../control-plane/src/heartbeats/record.ts';
import { deadlineOf } from '../../control-plane/src/heartbeats/state.ts';
import { formatTimestamp } from '../../control-plane/src/platform/http/time.ts';

/** A timestamptz as Postgres prints it in UTC: trailing zeros of the fraction dropped. */
function pgText(ms: number, micros: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-21T01:25:30.123Z
  const fraction = `${iso.slice(20, 23)}${String(micros).padStart(3, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('stored timestamps read as dates', () => {
  it("reads Postgres's form as formatTimestamp does, to the millisecond", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), fc.integer({ min: 0, max: 999 }), (ms, micros) => {
        const pg = pgText(ms, micros);
        assert.equal(toDate(pg)!.getTime(), new Date(formatTimestamp(pg)).getTime(), pg);
        assert.equal(toDate(pg)!.getTime(), ms, pg);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads other forms through formatTimestamp', () => {
    for (const text of ['2026-11-21T01:25:30.5Z', '2026-11-21 01:25:30.123456+00:00', '2026-11-21 01:25:30+00']) {
      assert.equal(toDate(text)!.getTime(), new Date(formatTimestamp(text)).getTime(), text);
    }
    assert.equal(toDate('2026-11-21 01:25:30.25+00')!.toISOString(), '2026-11-21T01:25:30.250Z');
    assert.equal(toDate(null), null);
    assert.throws(() => toDate('2026-11-21 01:2x:30+00'), /not a timestamp/);
  });
});

describe('deadline inputs read from the deadline columns only', () => {
  const base: StateRow = {
    status: 'up',
    next_ping_at: '2026-11-21 01:25:30.5+00',
    last_ping_at: '2026-11-21 00:25:30+00',
    last_ping_kind: 'success',
    started_at: null,
    down_since: null,
    grace_period: 60,
    cron_schedule: null,
    timezone: 'UTC',
    period: 3600,
    active: true,
    runs: [],
    last_success_at: '2026-11-21 00:25:30+00',
    failed_runs: 0,
    max_duration: null,
    min_duration: null,
    too_frequent_ratio: null,
    alert_after_failures: 1,
  };
  const rows: Array<[string, Partial<StateRow>, string | null]> = [
    ['up: 1 ms after the expected ping', {}, '2026-11-21T01:25:30.501Z'],
    ['new: the same', { status: 'new' }, '2026-11-21T01:25:30.501Z'],
    ['late: after the grace', { status: 'late' }, '2026-11-21T01:26:30.501Z'],
    ['late, with a cron schedule: the grace all the same', { status: 'late', cron_schedule: '*/5 * * * *' }, '2026-11-21T01:26:30.501Z'],
    ['down: none', { status: 'down', down_since: '2026-11-21 01:00:00+00' }, null],
    ['paused: none', { active: false }, null],
    ['up without an expected ping: none', { next_ping_at: null }, null],
    ['running: the grace after the start', { status: 'running', started_at: '2026-11-21 01:00:00+00' }, '2026-11-21T01:01:00.001Z'],
    [
      'running: max_duration after the earliest open run',
      {
        status: 'running',
        started_at: '2026-11-21 01:00:00+00',
        max_duration: 600,
        runs: [{ rid: '00000000-0000-4000-8000-000000000001', started_at: '2026-11-21T00:58:00.000Z' }],
      },
      '2026-11-21T01:08:00.001Z',
    ],
    ['running with no open run: none', { status: 'running' }, null],
  ];
  for (const [name, change, expected] of rows) {
    it(name, () => {
      const row = { ...base, ...change };
      const fromInputs = deadlineOf(deadlineInputsOf(row));
      assert.equal(fromInputs?.toISOString() ?? null, expected);
      assert.equal(fromInputs?.getTime() ?? null, deadlineOf(stateOf(row))?.getTime() ?? null);
    });
  }
});
