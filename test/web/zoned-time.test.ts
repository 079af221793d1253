import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromWallTime, wallTime } from '../../control-plane/src/web/zoned-time.ts';

describe('wall-clock times of a maintenance window form, in its time zone', () => {
  const rows: [what: string, local: string, tz: string, instant: string | null][] = [
    ['UTC', '2030-07-01T22:00', 'UTC', '2030-07-01T22:00:00.000Z'],
    ['Berlin in summer', '2030-07-01T22:00', 'Europe/Berlin', '2030-07-01T20:00:00.000Z'],
    ['Berlin in winter', '2030-01-15T22:00', 'Europe/Berlin', '2030-01-15T21:00:00.000Z'],
    ['with seconds', '2030-01-15T22:00:30', 'Europe/Berlin', '2030-01-15T21:00:30.000Z'],
    ['west of UTC, across midnight', '2031-01-15T01:00', 'America/New_York', '2031-01-15T06:00:00.000Z'],
    ['half-hour zone', '2030-03-01T09:00', 'Asia/Kolkata', '2030-03-01T03:30:00.000Z'],
    [
      'the hour Berlin skips in spring moves forward by it (02:30 is 03:30 CEST)',
      '2026-03-29T02:30',
      'Europe/Berlin',
      '2026-03-29T01:30:00.000Z',
    ],
    ['the hour Berlin repeats in autumn is its first pass (02:30 CEST)', '2026-10-25T02:30', 'Europe/Berlin', '2026-10-25T00:30:00.000Z'],
    ['just after the repeated hour', '2026-10-25T03:00', 'Europe/Berlin', '2026-10-25T02:00:00.000Z'],
    ['New York skips 02:00-03:00 in March', '2026-03-08T02:15', 'America/New_York', '2026-03-08T07:15:00.000Z'],
    ['not a time', 'tomorrow', 'UTC', null],
    ['no time of day', '2030-07-01', 'UTC', null],
    ['a day that does not exist', '2030-02-30T10:00', 'UTC', null],
    ['an hour that does not exist', '2030-02-10T24:00', 'UTC', null],
    ['a year of two digits', '0030-02-10T10:00', 'UTC', null],
  ];
  for (const [what, local, tz, instant] of rows) {
    it(`reads ${local} in ${tz}: ${what}`, () => {
      const ms = fromWallTime(local, tz);
      assert.equal(ms === null ? null : new Date(ms).toISOString(), instant);
    });
  }

  it('throws on an unknown time zone', () => {
    assert.throws(() => fromWallTime('2030-07-01T22:00', 'Mars/Olympus_Mons'), RangeError);
  });

  const shown: [instant: string, tz: string, local: string][] = [
    ['2030-07-01T20:00:00.000Z', 'Europe/Berlin', '2030-07-01T22:00'],
    ['2031-01-15T06:00:00.000Z', 'America/New_York', '2031-01-15T01:00'],
    ['2030-01-15T21:00:30.250Z', 'Europe/Berlin', '2030-01-15T22:00:30'],
    ['2026-10-25T00:30:00.000Z', 'Europe/Berlin', '2026-10-25T02:30'],
    ['2026-10-25T01:30:00.000Z', 'Europe/Berlin', '2026-10-25T02:30'],
  ];
  for (const [instant, tz, local] of shown) {
    it(`shows ${instant} in ${tz} as ${local}`, () => assert.equal(wallTime(Date.parse(instant), tz), local));
  }
});
