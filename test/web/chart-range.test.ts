import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChartRange } from '../../control-plane/src/monitors/history.ts';
import { defaultChartRange } from '../../control-plane/src/web/chart-range.ts';

const now = new Date('2026-03-01T12:00:00.000Z');
const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();

describe('the range a monitor chart opens on', () => {
  const rows: [string, string, { oldest: string; newest: string } | null, ChartRange][] = [
    // what, created, checks of the last day, range
    ['created a minute ago, no check yet', ago(1), null, '1h'],
    ['created 5 h 59 min ago, no check yet', ago(359), null, '1h'],
    ['created 6 h ago, no check in a day', ago(360), null, '24h'],
    ['a month old, no check in a day', ago(43_200), null, '24h'],
    ['new, checked for 10 minutes', ago(10), { oldest: ago(10), newest: ago(0.5) }, '1h'],
    ['old, but checked only since 2 hours (agents came late)', ago(4_320), { oldest: ago(120), newest: ago(1) }, '1h'],
    ['checked for 6 hours', ago(4_320), { oldest: ago(360), newest: ago(1) }, '24h'],
    ['checked all day', ago(43_200), { oldest: ago(1_439), newest: ago(1) }, '24h'],
    ['checked 5 to 4 hours ago, then paused: the last hour is empty', ago(300), { oldest: ago(300), newest: ago(240) }, '24h'],
    ['last check 59 minutes ago', ago(100), { oldest: ago(100), newest: ago(59) }, '1h'],
  ];
  for (const [what, created, span, range] of rows) {
    it(`${what}: ${range}`, () => assert.equal(defaultChartRange({ created_at: created }, span, now), range));
  }
});
