import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextCronOccurrence, nextExpectedPing, validateCron, validateTimezone } from '../../control-plane/src/heartbeats/schedule.ts';

const d = (iso: string): Date => new Date(iso);

describe('validateCron', () => {
  const valid: Array<[name: string, expr: string]> = [
    ['every minute', '* * * * *'],
    ['step values', '*/15 * * * *'],
    ['a range with a step', '0 9-17/2 * * 1-5'],
    ['lists', '5,35 * * * *'],
    ['Sunday as 0', '0 12 * * 0'],
    ['Sunday as 7', '0 12 * * 7'],
    ['names of months and days', '0 0 * jan-mar mon-fri'],
    ['the last day of the month', '0 0 L * *'],
    ['Feb 29', '0 0 29 2 *'],
    ['the nth weekday', '0 0 * * 1#2'],
    ['extra whitespace around and between fields', '  0\t0  * * *\n'],
    ['@hourly', '@hourly'],
    ['@daily', '@daily'],
    ['@midnight', '@midnight'],
    ['@weekly', '@weekly'],
    ['@monthly', '@monthly'],
    ['@yearly', '@yearly'],
    ['@annually', '@annually'],
    ['a shorthand in any case', '@Daily'],
    ['a shorthand in upper case', '@HOURLY'],
    ['a shorthand with whitespace around it', ' \t@weekly\n'],
  ];
  for (const [name, expr] of valid) {
    it(`accepts ${name} (${JSON.stringify(expr)})`, () => {
      assert.equal(validateCron(expr), null);
    });
  }

  const invalid: Array<[name: string, expr: string, reason: RegExp]> = [
    ['an empty expression', '', /expected 5 fields.*got 0/],
    ['three fields (cron-parser fills in the rest)', '* * *', /expected 5 fields.*got 3/],
    ['six fields with seconds', '0 0 * * * *', /expected 5 fields.*got 6/],
    ['@reboot', '@reboot', /^"@reboot" names no time/],
    ['@REBOOT', '@REBOOT', /^"@REBOOT" names no time/],
    [
      'an unknown shorthand',
      '@often',
      /^unknown shorthand "@often": use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually/,
    ],
    ["cron-parser's @minutely", '@minutely', /^unknown shorthand "@minutely"/],
    ["cron-parser's @weekdays", '@weekdays', /^unknown shorthand "@weekdays"/],
    ['a bare @', '@', /^unknown shorthand "@"/],
    ['a shorthand followed by fields', '@daily 5', /^"@daily" stands alone/],
    ['a shorthand followed by a command', '@hourly /usr/bin/backup', /^"@hourly" stands alone/],
    ['a shorthand in a field', '0 0 * * @daily', /^day of week field "@daily"/],
    ['minute 61', '61 * * * *', /^minute field "61": .*0-59/],
    ['hour 24', '0 24 * * *', /^hour field "24": .*0-23/],
    ['day of month 32', '0 0 32 * *', /^day of month field "32": .*1-31/],
    ['day of month 0', '0 0 0 * *', /^day of month field "0"/],
    ['month 13', '0 0 * 13 *', /^month field "13": .*1-12/],
    ['day of week 8', '0 0 * * 8', /^day of week field "8": .*0-7/],
    ['a reversed range', '5-1 * * * *', /^minute field "5-1"/],
    ['a zero step', '*/0 * * * *', /^minute field "\*\/0"/],
    ['words', 'foo * * * *', /^minute field "foo"/],
    ['hashed values', 'H * * * *', /^minute field "H": hashed values/],
    ['a day that never occurs (Feb 30)', '0 0 30 2 *', /never matches/],
    ['Apr 31', '0 0 31 4 *', /never matches/],
  ];
  for (const [name, expr, reason] of invalid) {
    it(`rejects ${name} (${JSON.stringify(expr)}) with a reason`, () => {
      const result = validateCron(expr);
      assert.ok(result !== null, `expected a reason for ${JSON.stringify(expr)}`);
      assert.match(result, reason);
    });
  }
});

describe('validateTimezone', () => {
  const rows: Array<[tz: string, valid: boolean]> = [
    ['UTC', true],
    ['Europe/Berlin', true],
    ['America/New_York', true],
    ['Asia/Kolkata', true],
    ['Etc/GMT+5', true],
    ['Nope/Zone', false],
    ['', false],
    ['+02:00', false],
    ['local', false],
  ];
  for (const [tz, valid] of rows) {
    it(`${valid ? 'accepts' : 'rejects'} ${JSON.stringify(tz)}`, () => {
      assert.equal(validateTimezone(tz), valid);
    });
  }
});

describe('nextCronOccurrence', () => {
  // Berlin switches to CEST on 2026-03-29 (02:00 CET -> 03:00 CEST) and back on 2026-10-25
  // (03:00 CEST -> 02:00 CET). Pinned here (more zones in schedule-dst.test.ts):
  // - a wall time that does not exist (02:30 on 2026-03-29) fires at the first instant after the
  //   jump, 03:00 CEST;
  // - a wall time that happens twice (02:30 on 2026-10-25) fires once, at the first (CEST) one;
  // - an hourly schedule fires on every real hour through both changes.
  const rows: Array<[name: string, expr: string, tz: string, after: string, expected: string]> = [
    ['is strictly after the given instant', '* * * * *', 'UTC', '2026-01-01T12:00:00Z', '2026-01-01T12:01:00Z'],
    ['skips an occurrence equal to the given instant', '0 0 * * *', 'UTC', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
    ['skips an occurrence half a second ago', '0 0 * * *', 'UTC', '2026-01-01T00:00:00.500Z', '2026-01-02T00:00:00Z'],
    ['takes an occurrence 1 ms ahead', '0 0 * * *', 'UTC', '2025-12-31T23:59:59.999Z', '2026-01-01T00:00:00Z'],
    ['rounds a running minute up', '* * * * *', 'UTC', '2026-01-01T00:00:30.500Z', '2026-01-01T00:01:00Z'],
    ['follows a step', '*/15 * * * *', 'UTC', '2026-01-01T12:07:00Z', '2026-01-01T12:15:00Z'],
    ['wraps a step into the next hour', '*/15 * * * *', 'UTC', '2026-01-01T12:45:00Z', '2026-01-01T13:00:00Z'],
    ['follows a step inside a range', '0 9-17/4 * * *', 'UTC', '2026-01-01T10:00:00Z', '2026-01-01T13:00:00Z'],
    ['leaves a stepped range for the next day', '0 9-17/4 * * *', 'UTC', '2026-01-01T17:00:00Z', '2026-01-02T09:00:00Z'],
    ['follows a list', '5,35 * * * *', 'UTC', '2026-01-01T12:06:00Z', '2026-01-01T12:35:00Z'],
    ['treats day of week 0 as Sunday', '0 12 * * 0', 'UTC', '2026-01-01T00:00:00Z', '2026-01-04T12:00:00Z'],
    ['treats day of week 7 as Sunday', '0 12 * * 7', 'UTC', '2026-01-01T00:00:00Z', '2026-01-04T12:00:00Z'],
    ['includes Sunday (7) in the range 6-7', '0 0 * * 6-7', 'UTC', '2026-01-03T00:00:00Z', '2026-01-04T00:00:00Z'],
    ['reads day names', '0 0 * * mon', 'UTC', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00Z'],
    ['matches day of month OR day of week when both are set', '0 0 13 * 5', 'UTC', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
    ['skips months without a 31st', '0 0 31 * *', 'UTC', '2026-01-31T00:00:00Z', '2026-03-31T00:00:00Z'],
    ['finds the 30th after February', '0 0 30 * *', 'UTC', '2026-01-30T00:00:00Z', '2026-03-30T00:00:00Z'],
    ['takes Feb 28 as the last day in a common year', '0 0 L * *', 'UTC', '2026-01-31T00:00:00Z', '2026-02-28T00:00:00Z'],
    ['takes Feb 29 as the last day in a leap year', '0 0 L * *', 'UTC', '2028-01-31T00:00:00Z', '2028-02-29T00:00:00Z'],
    ['waits for the next leap year for Feb 29', '0 0 29 2 *', 'UTC', '2026-01-01T00:00:00Z', '2028-02-29T00:00:00Z'],
    ['jumps four years from one Feb 29 to the next', '0 0 29 2 *', 'UTC', '2028-02-29T00:00:00Z', '2032-02-29T00:00:00Z'],
    ['rolls over the year', '59 23 31 12 *', 'UTC', '2026-12-31T23:59:00Z', '2027-12-31T23:59:00Z'],
    ['uses the time zone (New York, winter)', '0 9 * * *', 'America/New_York', '2026-01-01T00:00:00Z', '2026-01-01T14:00:00Z'],
    ['uses the time zone (New York, summer time)', '0 9 * * *', 'America/New_York', '2026-03-10T13:05:00Z', '2026-03-11T13:00:00Z'],
    ['uses a half-hour offset (Kolkata)', '0 9 * * *', 'Asia/Kolkata', '2026-01-01T00:00:00Z', '2026-01-01T03:30:00Z'],
    ['fires 02:30 CET the day before spring-forward', '30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-28T01:30:00Z'],
    [
      'fires the missing 02:30 at 03:00 CEST on spring-forward',
      '30 2 * * *',
      'Europe/Berlin',
      '2026-03-28T12:00:00Z',
      '2026-03-29T01:00:00Z',
    ],
    ['returns to 02:30 CEST the day after spring-forward', '30 2 * * *', 'Europe/Berlin', '2026-03-29T01:30:00Z', '2026-03-30T00:30:00Z'],
    [
      'fires hourly at 03:00 CEST right after the skipped hour',
      '0 * * * *',
      'Europe/Berlin',
      '2026-03-29T00:30:00Z',
      '2026-03-29T01:00:00Z',
    ],
    ['fires the first 02:30 (CEST) on fall-back', '30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', '2026-10-25T00:30:00Z'],
    ['does not fire the repeated 02:30 (CET) on fall-back', '30 2 * * *', 'Europe/Berlin', '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z'],
    ['fires hourly in the repeated hour (02:00 CET)', '0 * * * *', 'Europe/Berlin', '2026-10-25T00:00:00Z', '2026-10-25T01:00:00Z'],
    ['fires hourly after the repeated hour (03:00 CET)', '0 * * * *', 'Europe/Berlin', '2026-10-25T01:00:00Z', '2026-10-25T02:00:00Z'],
  ];
  for (const [name, expr, tz, after, expected] of rows) {
    it(`${name}: ${JSON.stringify(expr)} ${tz} after ${after}`, () => {
      assert.equal(nextCronOccurrence(expr, tz, d(after))?.toISOString(), d(expected).toISOString());
    });
  }
});

describe('nextExpectedPing', () => {
  const after = d('2026-01-01T10:20:00Z');
  const rows: Array<[name: string, schedule: Parameters<typeof nextExpectedPing>[0], expected: string | null]> = [
    ['uses the cron schedule', { cron_schedule: '0 * * * *', timezone: 'UTC', period: null }, '2026-01-01T11:00:00Z'],
    ['prefers the cron schedule over a period', { cron_schedule: '0 * * * *', timezone: 'UTC', period: 60 }, '2026-01-01T11:00:00Z'],
    [
      'applies the timezone to the cron schedule',
      { cron_schedule: '0 12 * * *', timezone: 'Europe/Berlin', period: null },
      '2026-01-01T11:00:00Z',
    ],
    ['defaults the timezone to UTC', { cron_schedule: '0 12 * * *', timezone: null, period: null }, '2026-01-01T12:00:00Z'],
    ['adds the period in seconds without a cron schedule', { cron_schedule: null, timezone: 'UTC', period: 90 }, '2026-01-01T10:21:30Z'],
    ['returns null with neither', { cron_schedule: null, timezone: 'UTC', period: null }, null],
    ['treats an empty cron schedule as none', { cron_schedule: '', timezone: 'UTC', period: null }, null],
  ];
  for (const [name, schedule, expected] of rows) {
    it(name, () => {
      assert.equal(nextExpectedPing(schedule, after)?.toISOString() ?? null, expected && d(expected).toISOString());
    });
  }
});
