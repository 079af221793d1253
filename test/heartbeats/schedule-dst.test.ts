import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CronExpressionParser } from 'cron-parser';
import { cronFields, nextCronOccurrence, nextExpectedPing } from '../../control-plane/src/heartbeats/schedule.ts';
import { offsetAt } from '../../control-plane/src/platform/time-zone.ts';

/*
 * Cron schedules read in real time zones. Every expected instant below was worked out by hand
 * from the zone's rules (tzdata, as the runtime's ICU has them), not copied from a run:
 *
 *   Europe/Berlin      2026-03-29 01:00Z  02:00 CET  -> 03:00 CEST   2026-10-25 01:00Z  03:00 CEST -> 02:00 CET
 *   America/New_York   2026-03-08 07:00Z  02:00 EST  -> 03:00 EDT    2026-11-01 06:00Z  02:00 EDT  -> 01:00 EST
 *   Australia/Lord_Howe 2026-10-03 15:30Z 02:00 +10:30 -> 02:30 +11  2026-04-04 15:00Z  02:00 +11  -> 01:30 +10:30
 *   Australia/Sydney   2026-10-03 16:00Z  02:00 AEST -> 03:00 AEDT   2026-04-04 16:00Z  03:00 AEDT -> 02:00 AEST
 *   Pacific/Auckland   2026-09-26 14:00Z  02:00 NZST -> 03:00 NZDT   2026-04-04 14:00Z  03:00 NZDT -> 02:00 NZST
 *   America/Havana     2026-03-08 05:00Z  00:00 CST  -> 01:00 CDT    2026-11-01 05:00Z  01:00 CDT  -> 00:00 CST
 *   America/Santiago   2026-09-06 04:00Z  00:00 -04  -> 01:00 -03    2026-04-05 03:00Z  00:00 -03  -> 23:00 -04 (Sat)
 *   Asia/Kolkata +05:30 and Asia/Kathmandu +05:45 all year.
 *
 * The rules pinned here (docs/heartbeats.md), Vixie cron's:
 * - An expression whose minute or hour field starts with `*` counts elapsed time: it fires at
 *   every instant the clock shows a time it names, so not at all for a time the clock jumps over
 *   and twice for one it shows twice. An hourly schedule fires on every real hour.
 * - Any other expression names times of day, each fired once: on its first pass when the clock
 *   shows it twice, at the first instant after the jump when the clock skips it (02:30 on the
 *   Berlin spring night fires at 03:00 CEST); several skipped times make that one firing.
 */
const rows: Array<[why: string, expr: string, tz: string, after: string, expected: string]> = [
  // Spring forward: the skipped hour.
  ['Berlin: 02:30 is skipped, fires at 03:00 CEST', '30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', '2026-03-29T01:00:00Z'],
  ['Berlin: one millisecond before the jump', '30 2 * * *', 'Europe/Berlin', '2026-03-29T00:59:59.999Z', '2026-03-29T01:00:00Z'],
  ['Berlin: fires once, next at 02:30 CEST the day after', '30 2 * * *', 'Europe/Berlin', '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z'],
  ['New York: 02:30 is skipped, fires at 03:00 EDT', '30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', '2026-03-08T07:00:00Z'],
  [
    'New York: 02:00 and 02:30 both skipped make one firing',
    '0,30 2 * * *',
    'America/New_York',
    '2026-03-08T07:00:00Z',
    '2026-03-09T06:00:00Z',
  ],
  [
    'New York: every 15 minutes of 02:xx has none that night',
    '*/15 2 * * *',
    'America/New_York',
    '2026-03-08T06:50:00Z',
    '2026-03-09T06:00:00Z',
  ],
  [
    'New York: half past every hour, 01:30 EST then 03:30 EDT',
    '30 * * * *',
    'America/New_York',
    '2026-03-08T06:30:00Z',
    '2026-03-08T07:30:00Z',
  ],
  [
    'New York: every 15 minutes goes from 01:45 EST to 03:00 EDT',
    '*/15 * * * *',
    'America/New_York',
    '2026-03-08T06:50:00Z',
    '2026-03-08T07:00:00Z',
  ],
  ['New York: ... then 03:15 EDT', '*/15 * * * *', 'America/New_York', '2026-03-08T07:00:00Z', '2026-03-08T07:15:00Z'],
  ['New York: hourly, 01:00 EST then 03:00 EDT', '0 * * * *', 'America/New_York', '2026-03-08T06:30:00Z', '2026-03-08T07:00:00Z'],
  ['Havana: midnight is skipped, fires at 01:00 CDT', '@daily', 'America/Havana', '2026-03-07T12:00:00Z', '2026-03-08T05:00:00Z'],
  ['Santiago: midnight is skipped, fires at 01:00 -03', '0 0 * * *', 'America/Santiago', '2026-09-05T12:00:00Z', '2026-09-06T04:00:00Z'],

  // Fall back: the repeated hour.
  ['New York: 01:30 fires on its first pass (EDT)', '30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', '2026-11-01T05:30:00Z'],
  ['New York: 01:30 does not fire again at 01:30 EST', '30 1 * * *', 'America/New_York', '2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z'],
  ['New York: asked from inside the second pass', '30 1 * * *', 'America/New_York', '2026-11-01T06:15:00Z', '2026-11-02T06:30:00Z'],
  ['New York: hourly fires at the second 01:00 (EST)', '0 * * * *', 'America/New_York', '2026-11-01T05:00:00Z', '2026-11-01T06:00:00Z'],
  ['New York: hourly goes on at 02:00 EST', '0 * * * *', 'America/New_York', '2026-11-01T06:00:00Z', '2026-11-01T07:00:00Z'],
  ['New York: @hourly from the middle of the first pass', '@hourly', 'America/New_York', '2026-11-01T05:30:00Z', '2026-11-01T06:00:00Z'],
  [
    'New York: a step on the minute runs through both passes',
    '*/15 1 * * *',
    'America/New_York',
    '2026-11-01T05:50:00Z',
    '2026-11-01T06:00:00Z',
  ],
  [
    'Havana: midnight is repeated, fires on its first pass (CDT)',
    '@midnight',
    'America/Havana',
    '2026-10-31T12:00:00Z',
    '2026-11-01T04:00:00Z',
  ],
  ['Havana: ... and not on the second', '@midnight', 'America/Havana', '2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z'],
  [
    'Santiago: Saturday 23:30 fires on its first pass (-03)',
    '30 23 * * *',
    'America/Santiago',
    '2026-04-04T12:00:00Z',
    '2026-04-05T02:30:00Z',
  ],
  [
    'Santiago: Sunday midnight comes once, after the repeat (-04)',
    '@daily',
    'America/Santiago',
    '2026-04-04T12:00:00Z',
    '2026-04-05T04:00:00Z',
  ],

  // 30- and 45-minute offsets, and Lord Howe's 30-minute daylight saving.
  ['Kathmandu: 09:00 at +05:45', '0 9 * * *', 'Asia/Kathmandu', '2026-01-01T00:00:00Z', '2026-01-01T03:15:00Z'],
  ['Kathmandu: hourly on the local hour', '@hourly', 'Asia/Kathmandu', '2026-01-01T00:00:00Z', '2026-01-01T00:15:00Z'],
  ['Kolkata: the 1st begins at 18:30 UTC the day before', '0 0 1 * *', 'Asia/Kolkata', '2026-01-31T00:00:00Z', '2026-01-31T18:30:00Z'],
  [
    'Lord Howe: 02:15 is skipped (02:00 -> 02:30), fires at 02:30',
    '15 2 * * *',
    'Australia/Lord_Howe',
    '2026-10-03T12:00:00Z',
    '2026-10-03T15:30:00Z',
  ],
  [
    'Lord Howe: hourly has no 02:00 that night, 01:00 then 03:00',
    '0 * * * *',
    'Australia/Lord_Howe',
    '2026-10-03T14:30:00Z',
    '2026-10-03T16:00:00Z',
  ],
  ['Lord Howe: 02:00 as a time of day fires at 02:30', '0 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00Z', '2026-10-03T15:30:00Z'],
  ['Lord Howe: 01:45 fires on its first pass (+11)', '45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T12:00:00Z', '2026-04-04T14:45:00Z'],
  ['Lord Howe: ... and not again at 01:45 +10:30', '45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T14:45:00Z', '2026-04-05T15:15:00Z'],
  [
    'Lord Howe: every 30 minutes fires at the second 01:30',
    '*/30 * * * *',
    'Australia/Lord_Howe',
    '2026-04-04T14:45:00Z',
    '2026-04-04T15:00:00Z',
  ],
  ['Lord Howe: ... then 02:00 +10:30', '*/30 * * * *', 'Australia/Lord_Howe', '2026-04-04T15:00:00Z', '2026-04-04T15:30:00Z'],

  // Southern hemisphere: summer time over the new year.
  [
    'Sydney: 02:30 is skipped in October, fires at 03:00 AEDT',
    '30 2 * * *',
    'Australia/Sydney',
    '2026-10-03T12:00:00Z',
    '2026-10-03T16:00:00Z',
  ],
  [
    'Sydney: 02:30 in April fires on its first pass (AEDT)',
    '30 2 * * *',
    'Australia/Sydney',
    '2026-04-04T12:00:00Z',
    '2026-04-04T15:30:00Z',
  ],
  ['Sydney: asked from the second pass, the next day', '30 2 * * *', 'Australia/Sydney', '2026-04-04T16:15:00Z', '2026-04-05T16:30:00Z'],
  ['Sydney: @monthly in summer time (+11)', '@monthly', 'Australia/Sydney', '2026-01-15T00:00:00Z', '2026-01-31T13:00:00Z'],
  [
    'Auckland: 02:30 is skipped in September, fires at 03:00 NZDT',
    '30 2 * * *',
    'Pacific/Auckland',
    '2026-09-26T12:00:00Z',
    '2026-09-26T14:00:00Z',
  ],
  [
    'Auckland: weekdays at 09:00, the Monday after the change',
    '0 9 * * 1-5',
    'Pacific/Auckland',
    '2026-09-25T22:00:00Z',
    '2026-09-27T20:00:00Z',
  ],
  ['Auckland: @yearly at midnight NZDT (+13)', '@yearly', 'Pacific/Auckland', '2026-06-01T00:00:00Z', '2026-12-31T11:00:00Z'],

  // 29 February.
  ['29 Feb waits for the next leap year (Berlin, CET)', '0 0 29 2 *', 'Europe/Berlin', '2026-01-01T00:00:00Z', '2028-02-28T23:00:00Z'],
  ['29 Feb: four years on from one', '0 0 29 2 *', 'America/New_York', '2028-02-29T05:00:00Z', '2032-02-29T05:00:00Z'],
  ['29 Feb: 2100 is not a leap year', '0 12 29 2 *', 'UTC', '2096-02-29T12:00:00Z', '2104-02-29T12:00:00Z'],
  ['the last day of February in a leap year', '0 0 L 2 *', 'UTC', '2027-03-01T00:00:00Z', '2028-02-29T00:00:00Z'],
  ['the last day of March, in summer time (Berlin)', '0 0 L * *', 'Europe/Berlin', '2026-02-27T23:00:00Z', '2026-03-30T22:00:00Z'],

  // Day of month and day of week both set: either matches.
  ['13th or Friday: Friday the 6th comes first', '0 0 13 * 5', 'UTC', '2026-02-01T00:00:00Z', '2026-02-06T00:00:00Z'],
  ['13th or Friday: Friday the 13th fires once', '0 0 13 * 5', 'UTC', '2026-02-06T00:00:00Z', '2026-02-13T00:00:00Z'],
  ['13th or Friday: Monday the 13th comes before Friday the 17th', '0 0 13 * 5', 'UTC', '2026-04-10T00:00:00Z', '2026-04-13T00:00:00Z'],
  ['a step counts as set: odd days or Fridays', '0 0 */2 * 5', 'UTC', '2026-02-01T00:00:00Z', '2026-02-03T00:00:00Z'],
  [
    'a step counts as set: Friday the 6th fires, even day though it is',
    '0 0 */2 * 5',
    'UTC',
    '2026-02-05T00:00:00Z',
    '2026-02-06T00:00:00Z',
  ],
  ['day of week alone when day of month is *', '0 0 * * 5', 'UTC', '2026-04-10T00:00:00Z', '2026-04-17T00:00:00Z'],
  ['13th or Friday, in Kolkata', '0 0 13 * fri', 'Asia/Kolkata', '2026-04-10T00:00:00Z', '2026-04-12T18:30:00Z'],

  // The shorthands, in any case and with the whitespace a form may leave.
  ['@daily in Kolkata', '@daily', 'Asia/Kolkata', '2026-01-01T00:00:00Z', '2026-01-01T18:30:00Z'],
  ['@weekly is Sunday midnight', '@weekly', 'America/New_York', '2026-01-01T00:00:00Z', '2026-01-04T05:00:00Z'],
  ['@annually rolls over the year', '@annually', 'UTC', '2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00Z'],
  ['@MIDNIGHT in upper case (Berlin, CEST)', '@MIDNIGHT', 'Europe/Berlin', '2026-07-01T00:00:00Z', '2026-07-01T22:00:00Z'],
  ['" @Daily " with spaces', ' @Daily ', 'UTC', '2026-07-01T00:00:00Z', '2026-07-02T00:00:00Z'],

  // Steps and ranges across midnight.
  ['a range of hours over midnight, as two ranges', '0 22-23,0-2 * * *', 'Europe/Berlin', '2026-01-01T22:30:00Z', '2026-01-01T23:00:00Z'],
  ['stepped ranges over midnight', '0 20-23/2,0-4/2 * * *', 'UTC', '2026-01-01T22:00:00Z', '2026-01-02T00:00:00Z'],
  [
    'a step in the hours before and after midnight (Kolkata)',
    '*/20 23,0 * * *',
    'Asia/Kolkata',
    '2026-01-01T18:25:00Z',
    '2026-01-01T18:30:00Z',
  ],
  ['a day-of-month step into the next year', '0 0 */10 * *', 'UTC', '2026-12-31T00:00:00Z', '2027-01-01T00:00:00Z'],
  ['Saturday night to Saturday night', '30 23 * * 6', 'America/New_York', '2026-01-04T04:30:00Z', '2026-01-11T04:30:00Z'],
];

const iso = (d: Date | null) => d?.toISOString() ?? null;

describe('cron schedules in time zones', () => {
  for (const [why, expr, tz, after, expected] of rows) {
    it(`${why}: ${JSON.stringify(expr)} ${tz} after ${after}`, () => {
      const want = new Date(expected).toISOString();
      assert.equal(iso(nextCronOccurrence(expr, tz, new Date(after))), want);
      assert.equal(iso(nextExpectedPing({ cron_schedule: expr, timezone: tz, period: 60 }, new Date(after))), want);
    });
  }
});

describe('nextExpectedPing across daylight-saving changes', () => {
  const rows: Array<[why: string, schedule: Parameters<typeof nextExpectedPing>[0], after: string, expected: string | null]> = [
    [
      'a shorthand without a time zone is read in UTC',
      { cron_schedule: '@hourly', timezone: null },
      '2026-01-01T10:20:00Z',
      '2026-01-01T11:00:00Z',
    ],
    [
      'a ping late for 01:30 EDT, inside the repeated hour, waits for the next day',
      { cron_schedule: '30 1 * * *', timezone: 'America/New_York' },
      '2026-11-01T06:40:00Z',
      '2026-11-02T06:30:00Z',
    ],
    [
      'a ping at 03:00 CEST for the skipped 02:30 waits for the next day',
      { cron_schedule: '30 2 * * *', timezone: 'Europe/Berlin' },
      '2026-03-29T01:00:05Z',
      '2026-03-30T00:30:00Z',
    ],
    [
      'a period is elapsed time, whatever the zone',
      { cron_schedule: null, timezone: 'Europe/Berlin', period: 3600 },
      '2026-10-25T00:30:00Z',
      '2026-10-25T01:30:00Z',
    ],
    [
      'the cron schedule wins over a period',
      { cron_schedule: '@daily', timezone: 'Asia/Kolkata', period: 60 },
      '2026-01-01T00:00:00Z',
      '2026-01-01T18:30:00Z',
    ],
  ];
  for (const [why, schedule, after, expected] of rows) {
    it(why, () => {
      assert.equal(iso(nextExpectedPing(schedule, new Date(after))), expected && new Date(expected).toISOString());
    });
  }
});

/*
 * A second reading of the same rules, minute by minute along the clock rather than from the
 * expression: walk every whole minute of the days around each change, see what the clock shows
 * there, and decide whether that minute fires. Then every `after` of those days must get the
 * first such minute after it.
 */
describe('agrees with a minute-by-minute reading of the clock', () => {
  const MINUTE = 60_000;
  const cases: Array<[expr: string, tz: string, day: string]> = [
    ['30 2 * * *', 'Europe/Berlin', '2026-03-29'],
    ['30 * * * *', 'Europe/Berlin', '2026-03-29'],
    ['*/15 2 * * *', 'America/New_York', '2026-03-08'],
    ['0 2 * * *', 'Australia/Lord_Howe', '2026-10-04'],
    ['30 2 * * *', 'Europe/Berlin', '2026-10-25'],
    ['*/20 * * * *', 'Europe/Berlin', '2026-10-25'],
    ['0,30 1,2 * * *', 'America/New_York', '2026-03-08'],
    ['0,30 1,2 * * *', 'America/New_York', '2026-11-01'],
    ['*/10 1 * * *', 'America/New_York', '2026-11-01'],
    ['0 * * * *', 'Australia/Lord_Howe', '2026-10-04'],
    ['*/15 1-2 * * *', 'Australia/Lord_Howe', '2026-04-05'],
    ['45 2 * * *', 'Australia/Lord_Howe', '2026-04-05'],
    ['@daily', 'America/Havana', '2026-11-01'],
    ['@daily', 'America/Santiago', '2026-04-05'],
  ];

  function firingMinutes(expr: string, tz: string, start: number, end: number): number[] {
    const fields = cronFields(expr);
    const [minute, hour] = fields.split(' ');
    const elapsed = minute!.startsWith('*') || hour!.startsWith('*');
    const walls = new Set<number>();
    const it = CronExpressionParser.parse(fields, { currentDate: new Date(start - 2 * 86_400_000), tz: 'UTC' });
    for (let w = it.next().getTime(); w < end + 2 * 86_400_000; w = it.next().getTime()) walls.add(w);
    const fired: number[] = [];
    const seen = new Set<number>();
    for (let t = start; t < end; t += MINUTE) {
      const offset = offsetAt(tz, t);
      const wall = t + offset;
      const previous = offsetAt(tz, t - MINUTE);
      // The clock jumped forward just before t: times of day it skipped fire here, once.
      let fires = false;
      if (!elapsed) for (let skipped = t + previous; skipped < wall; skipped += MINUTE) if (walls.has(skipped)) fires = true;
      if (walls.has(wall) && (elapsed || !seen.has(wall))) fires = true;
      seen.add(wall);
      if (fires) fired.push(t);
    }
    return fired;
  }

  for (const [expr, tz, day] of cases) {
    it(`${JSON.stringify(expr)} in ${tz} around ${day}`, () => {
      const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      const end = start + 3 * 86_400_000;
      const fired = firingMinutes(expr, tz, start, end);
      assert.ok(fired.length > 0);
      // Every 7 minutes and 13 seconds, so `after` falls on and between whole minutes.
      for (let after = start + 2 * 3_600_000; after < fired.at(-1)!; after += 7 * MINUTE + 13_000) {
        const want = fired.find((t) => t > after)!;
        assert.equal(
          nextCronOccurrence(expr, tz, new Date(after))?.toISOString(),
          new Date(want).toISOString(),
          `after ${new Date(after).toISOString()}`,
        );
      }
    });
  }
});

describe('an expression that only names times the clock skips', () => {
  // 02:00-02:59 on the last Sunday of March: the hour Europe/Berlin skips every year, and that
  // New York does not (it skips on the second Sunday of March).
  it('never fires in Europe/Berlin', () => {
    assert.equal(nextCronOccurrence('* 2 * 3 0L', 'Europe/Berlin', new Date('2026-01-01T00:00:00Z')), null);
    assert.equal(nextExpectedPing({ cron_schedule: '* 2 * 3 0L', timezone: 'Europe/Berlin' }, new Date('2026-01-01T00:00:00Z')), null);
  });
  it('fires where the clock shows those times (New York, 29 March 2026 02:00 EDT)', () => {
    assert.equal(iso(nextCronOccurrence('* 2 * 3 0L', 'America/New_York', new Date('2026-01-01T00:00:00Z'))), '2026-03-29T06:00:00.000Z');
  });
  it('as a time of day, fires after the jump (Berlin, 03:00 CEST)', () => {
    assert.equal(iso(nextCronOccurrence('0 2 * 3 0L', 'Europe/Berlin', new Date('2026-01-01T00:00:00Z'))), '2026-03-29T01:00:00.000Z');
  });
});
