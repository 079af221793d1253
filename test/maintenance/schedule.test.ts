import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideAlert, decideRelease, type AlertDecision, type ReleaseDecision } from '../../control-plane/src/maintenance/decision.ts';
import {
  boundaryStep,
  maintenanceUntil,
  nextBoundary,
  runAt,
  type BoundaryStep,
  type WindowSchedule,
} from '../../control-plane/src/maintenance/schedule.ts';

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().replace('.000Z', 'Z'));

const oneOff = (start: string, end: string, extra: Partial<WindowSchedule> = {}): WindowSchedule => ({
  starts_at: t(start),
  ends_at: t(end),
  cron: null,
  duration_seconds: null,
  timezone: 'UTC',
  active: true,
  ...extra,
});
const recurring = (cron: string, minutes: number, timezone = 'UTC', extra: Partial<WindowSchedule> = {}): WindowSchedule => ({
  starts_at: null,
  ends_at: null,
  cron,
  duration_seconds: minutes * 60,
  timezone,
  active: true,
  ...extra,
});

describe('maintenance window occurrences', () => {
  // [name, window, instant, run covering it ([start, end] or null), next boundary after it]
  const rows: [string, WindowSchedule, string, [string, string] | null, string | null][] = [
    [
      'one-off, before it starts',
      oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z'),
      '2026-05-01T09:00:00Z',
      null,
      '2026-05-01T10:00:00Z',
    ],
    [
      'one-off, at its start',
      oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z'),
      '2026-05-01T10:00:00Z',
      ['2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z'],
      '2026-05-01T12:00:00Z',
    ],
    ['one-off, at its end (half-open)', oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z'), '2026-05-01T12:00:00Z', null, null],
    ['one-off, paused', oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z', { active: false }), '2026-05-01T11:00:00Z', null, null],
    [
      'daily at 02:00 UTC for 1 h, inside',
      recurring('0 2 * * *', 60),
      '2026-05-01T02:30:00Z',
      ['2026-05-01T02:00:00Z', '2026-05-01T03:00:00Z'],
      '2026-05-01T03:00:00Z',
    ],
    ['daily at 02:00 UTC for 1 h, at its end', recurring('0 2 * * *', 60), '2026-05-01T03:00:00Z', null, '2026-05-02T02:00:00Z'],
    [
      'a shorthand in any case, @Daily',
      recurring(' @Daily ', 60),
      '2026-05-01T00:30:00Z',
      ['2026-05-01T00:00:00Z', '2026-05-01T01:00:00Z'],
      '2026-05-01T01:00:00Z',
    ],
    ['@midnight, which cron-parser lacks', recurring('@midnight', 60), '2026-05-01T01:30:00Z', null, '2026-05-02T00:00:00Z'],
    // Europe/Berlin skips 02:00-03:00 on 2026-03-29: 02:30 local starts at 03:30 CEST (01:30Z).
    [
      'Berlin 02:30 on the spring-forward night, after the gap',
      recurring('30 2 * * *', 60, 'Europe/Berlin'),
      '2026-03-29T01:45:00Z',
      ['2026-03-29T01:30:00Z', '2026-03-29T02:30:00Z'],
      '2026-03-29T02:30:00Z',
    ],
    [
      'Berlin 02:30 on the spring-forward night, before it',
      recurring('30 2 * * *', 60, 'Europe/Berlin'),
      '2026-03-29T00:45:00Z',
      null,
      '2026-03-29T01:30:00Z',
    ],
    [
      'Berlin 02:30 the day after (CEST)',
      recurring('30 2 * * *', 60, 'Europe/Berlin'),
      '2026-03-30T00:40:00Z',
      ['2026-03-30T00:30:00Z', '2026-03-30T01:30:00Z'],
      '2026-03-30T01:30:00Z',
    ],
    // 01:00 local for 3 h of elapsed time across the gap ends at 05:00 CEST.
    [
      'Berlin 01:00 for 3 h across the gap',
      recurring('0 1 * * *', 180, 'Europe/Berlin'),
      '2026-03-29T02:30:00Z',
      ['2026-03-29T00:00:00Z', '2026-03-29T03:00:00Z'],
      '2026-03-29T03:00:00Z',
    ],
    // Europe/Berlin repeats 02:00-03:00 on 2026-10-25: 02:30 starts once, on the first pass (CEST).
    [
      'Berlin 02:30 on the fall-back night, second pass of 02:15',
      recurring('30 2 * * *', 60, 'Europe/Berlin'),
      '2026-10-25T01:15:00Z',
      ['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z'],
      '2026-10-25T01:30:00Z',
    ],
    [
      'Berlin 02:30 on the fall-back night, second pass of 02:45: no second start',
      recurring('30 2 * * *', 60, 'Europe/Berlin'),
      '2026-10-25T01:45:00Z',
      null,
      '2026-10-26T01:30:00Z',
    ],
    // Wall-clock times of the repeated hour start nothing on their second pass, frequent schedules included.
    [
      'Berlin every 30 min on the fall-back night: the repeated hour is skipped',
      recurring('*/30 * * * *', 30, 'Europe/Berlin'),
      '2026-10-25T01:40:00Z',
      null,
      '2026-10-25T02:00:00Z',
    ],
    // America/New_York skips 02:00-03:00 on 2026-03-08 and repeats 01:00-02:00 on 2026-11-01.
    [
      'New York 02:00 on the spring-forward night',
      recurring('0 2 * * *', 30, 'America/New_York'),
      '2026-03-08T07:10:00Z',
      ['2026-03-08T07:00:00Z', '2026-03-08T07:30:00Z'],
      '2026-03-08T07:30:00Z',
    ],
    [
      'New York 01:30 on the fall-back night, inside (01:00 EST)',
      recurring('30 1 * * *', 60, 'America/New_York'),
      '2026-11-01T06:00:00Z',
      ['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z'],
      '2026-11-01T06:30:00Z',
    ],
    [
      'New York 01:30 on the fall-back night, 01:40 EST: no second start',
      recurring('30 1 * * *', 60, 'America/New_York'),
      '2026-11-01T06:40:00Z',
      null,
      '2026-11-02T06:30:00Z',
    ],
    [
      'New York summer time, a weekday-only schedule on a Saturday',
      recurring('0 22 * * 1-5', 120, 'America/New_York'),
      '2026-07-04T03:00:00Z',
      ['2026-07-04T02:00:00Z', '2026-07-04T04:00:00Z'],
      '2026-07-04T04:00:00Z',
    ],
    // Overlapping occurrences of one window are one run: 09:00 and 10:00 for 90 min each.
    [
      'overlapping occurrences, in the second',
      recurring('0 9,10 * * *', 90),
      '2026-05-01T10:45:00Z',
      ['2026-05-01T10:00:00Z', '2026-05-01T11:30:00Z'],
      '2026-05-01T11:30:00Z',
    ],
    [
      'overlapping occurrences, in the first: ends with the second',
      recurring('0 9,10 * * *', 90),
      '2026-05-01T09:15:00Z',
      ['2026-05-01T09:00:00Z', '2026-05-01T11:30:00Z'],
      '2026-05-01T11:30:00Z',
    ],
    [
      'touching occurrences are one run',
      recurring('0 9,10 * * *', 60),
      '2026-05-01T09:15:00Z',
      ['2026-05-01T09:00:00Z', '2026-05-01T11:00:00Z'],
      '2026-05-01T11:00:00Z',
    ],
    [
      'created after its occurrence began: not before its creation',
      recurring('0 2 * * *', 60, 'UTC', { not_before: t('2026-05-01T02:05:00Z') }),
      '2026-05-01T02:01:00Z',
      null,
      '2026-05-02T02:00:00Z',
    ],
    [
      'created after its occurrence began: covered from then on',
      recurring('0 2 * * *', 60, 'UTC', { not_before: t('2026-05-01T02:05:00Z') }),
      '2026-05-01T02:10:00Z',
      ['2026-05-01T02:00:00Z', '2026-05-01T03:00:00Z'],
      '2026-05-01T03:00:00Z',
    ],
  ];
  for (const [name, w, at, run, next] of rows) {
    it(name, () => {
      const got = runAt(w, t(at));
      assert.deepEqual(got && [iso(got.start), iso(got.end)], run, 'run');
      assert.equal(iso(nextBoundary(w, t(at))), next, 'next boundary');
    });
  }
});

describe('maintenance of a subject covered by several windows', () => {
  const a = oneOff('2026-05-01T10:00:00Z', '2026-05-01T11:00:00Z');
  const b = oneOff('2026-05-01T10:30:00Z', '2026-05-01T12:00:00Z');
  const touching = oneOff('2026-05-01T12:00:00Z', '2026-05-01T12:30:00Z');
  const later = oneOff('2026-05-01T13:00:00Z', '2026-05-01T14:00:00Z');
  const rows: [string, WindowSchedule[], string, string | null][] = [
    ['no window', [], '2026-05-01T10:15:00Z', null],
    ['outside every window', [a, b, later], '2026-05-01T09:59:59Z', null],
    ['overlapping windows: until the later end', [a, b], '2026-05-01T10:15:00Z', '2026-05-01T12:00:00Z'],
    ['a window touching the end extends it', [a, b, touching], '2026-05-01T10:15:00Z', '2026-05-01T12:30:00Z'],
    ['a window after a gap does not', [a, b, touching, later], '2026-05-01T10:15:00Z', '2026-05-01T12:30:00Z'],
    [
      'a recurring and a one-off window overlapping',
      [recurring('0 2 * * *', 60), oneOff('2026-05-01T02:30:00Z', '2026-05-01T04:00:00Z')],
      '2026-05-01T02:10:00Z',
      '2026-05-01T04:00:00Z',
    ],
  ];
  for (const [name, windows, at, until] of rows) {
    it(name, () => assert.equal(iso(maintenanceUntil(windows, t(at))), until));
  }
});

describe('the boundary worker step', () => {
  const w = oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z');
  const step = (e: BoundaryStep['event'], run: [string, string] | null, next: string | null) => ({ e, run, next });
  const rows: [string, WindowSchedule, string | null, string, ReturnType<typeof step>][] = [
    [
      'starts at its start',
      w,
      null,
      '2026-05-01T10:00:00Z',
      step('maintenance.started', ['2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z'], '2026-05-01T12:00:00Z'),
    ],
    ['ends at its end', w, '2026-05-01T12:00:00Z', '2026-05-01T12:00:00Z', step('maintenance.ended', null, null)],
    ['created before it starts: waits', w, null, '2026-05-01T08:00:00Z', step(null, null, '2026-05-01T10:00:00Z')],
    [
      'lengthened while it runs: no event, a later end',
      oneOff('2026-05-01T10:00:00Z', '2026-05-01T13:00:00Z'),
      '2026-05-01T12:00:00Z',
      '2026-05-01T11:00:00Z',
      step(null, ['2026-05-01T11:00:00Z', '2026-05-01T13:00:00Z'], '2026-05-01T13:00:00Z'),
    ],
    [
      'paused while it runs: ends now',
      { ...w, active: false },
      '2026-05-01T12:00:00Z',
      '2026-05-01T11:00:00Z',
      step('maintenance.ended', null, null),
    ],
    [
      'created in the middle of an occurrence: starts now',
      recurring('0 2 * * *', 60),
      null,
      '2026-05-01T02:30:00Z',
      step('maintenance.started', ['2026-05-01T02:30:00Z', '2026-05-01T03:00:00Z'], '2026-05-01T03:00:00Z'),
    ],
    [
      'a recurring one ends, the next start is tomorrow',
      recurring('0 2 * * *', 60),
      '2026-05-01T03:00:00Z',
      '2026-05-01T03:00:00Z',
      step('maintenance.ended', null, '2026-05-02T02:00:00Z'),
    ],
  ];
  for (const [name, win, activeUntil, at, want] of rows) {
    it(name, () => {
      const got = boundaryStep(win, activeUntil === null ? null : t(activeUntil), t(at));
      assert.deepEqual({ e: got.event, run: got.run && [iso(got.run.start), iso(got.run.end)], next: iso(got.next_boundary_at) }, want);
      assert.equal(got.active_until, got.run?.end ?? null);
    });
  }
});

describe('the alert decision', () => {
  const w = oneOff('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z');
  const adjacent = oneOff('2026-05-01T12:00:00Z', '2026-05-01T13:00:00Z');
  const berlin = recurring('30 2 * * *', 60, 'Europe/Berlin');
  const hold = (until: string): AlertDecision => ({ action: 'hold', until: t(until) });
  const route: AlertDecision = { action: 'route' };
  const drop: AlertDecision = { action: 'drop' };
  const rows: [string, 'down' | 'up', string, WindowSchedule[], boolean, AlertDecision][] = [
    ['a down outside any window is routed', 'down', '2026-05-01T09:00:00Z', [w], false, route],
    ['a down with no window is routed', 'down', '2026-05-01T11:00:00Z', [], false, route],
    ['a down inside a window is held until it ends', 'down', '2026-05-01T11:00:00Z', [w], false, hold('2026-05-01T12:00:00Z')],
    ['a down at the window start is held', 'down', '2026-05-01T10:00:00Z', [w], false, hold('2026-05-01T12:00:00Z')],
    ['a down at the window end is routed', 'down', '2026-05-01T12:00:00Z', [w], false, route],
    [
      'a down inside chained windows is held to the end of the chain',
      'down',
      '2026-05-01T11:00:00Z',
      [w, adjacent],
      false,
      hold('2026-05-01T13:00:00Z'),
    ],
    ['a down in the DST-shifted occurrence is held', 'down', '2026-03-29T01:40:00Z', [berlin], false, hold('2026-03-29T02:30:00Z')],
    ['a down in a paused window is routed', 'down', '2026-05-01T11:00:00Z', [{ ...w, active: false }], false, route],
    ['an up whose down was held is dropped', 'up', '2026-05-01T11:30:00Z', [w], true, drop],
    ['an up whose down was dropped at the window end is dropped', 'up', '2026-05-01T12:30:00Z', [w], true, drop],
    ['an up whose down was sent is routed, even inside a window', 'up', '2026-05-01T11:30:00Z', [w], false, route],
    ['an up outside windows whose down was sent is routed', 'up', '2026-05-01T09:30:00Z', [], false, route],
  ];
  for (const [name, direction, at, windows, downUnsent, want] of rows) {
    it(name, () => assert.deepEqual(decideAlert({ direction, occurredAt: t(at), windows, downUnsent }), want));
  }

  const release: [string, string, WindowSchedule[], boolean, ReleaseDecision][] = [
    ['still down when the window ends: released', '2026-05-01T12:00:00Z', [w], true, { action: 'release' }],
    ['recovered meanwhile: dropped', '2026-05-01T12:00:00Z', [w], false, { action: 'drop' }],
    [
      'a window touching the end: postponed',
      '2026-05-01T12:00:00Z',
      [w, adjacent],
      true,
      { action: 'postpone', until: t('2026-05-01T13:00:00Z') },
    ],
    [
      'a window later that day does not postpone',
      '2026-05-01T12:00:00Z',
      [w, oneOff('2026-05-01T14:00:00Z', '2026-05-01T15:00:00Z')],
      true,
      { action: 'release' },
    ],
  ];
  for (const [name, at, windows, stillDown, want] of release) {
    it(`release: ${name}`, () => assert.deepEqual(decideRelease({ releaseAt: t(at), windows, stillDown }), want));
  }
});
