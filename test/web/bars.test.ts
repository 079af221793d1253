import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PublicIncident, SparkPoint } from '../../control-plane/src/monitors/history.ts';
import { checkBars, dayGrade, dayText, incidentsByDay, slotText, uptimeBars } from '../../control-plane/src/web/bars.ts';

const slot = (over: Partial<SparkPoint>): SparkPoint => ({
  at: '2026-03-01T14:05:00.000000Z',
  ms: 132,
  ok: true,
  checks: 2,
  failed: 0,
  ...over,
});

describe('the bars of a monitor list row', () => {
  const rows: [string, SparkPoint, string][] = [
    ['up', slot({}), '2026-03-01 14:05 UTC · 132 ms · up'],
    ['down everywhere', slot({ ms: null, ok: false, failed: 2 }), '2026-03-01 14:05 UTC · down: 2 of 2 regions failed'],
    ['down in one region', slot({ ok: false, failed: 1 }), '2026-03-01 14:05 UTC · 132 ms · partly down: 1 of 2 regions failed'],
    ['down with one region', slot({ ms: null, ok: false, checks: 1, failed: 1 }), '2026-03-01 14:05 UTC · down: the check failed'],
  ];
  for (const [what, p, text] of rows) it(`says when, how fast and how it went: ${what}`, () => assert.equal(slotText(p), text));

  it('draws the latest slots on the right, grey before the first check, green, amber and red', () => {
    const svg = checkBars([slot({}), slot({ ok: false, failed: 1 }), slot({ ms: null, ok: false, failed: 2 })], 5).value;
    assert.deepEqual(
      [...svg.matchAll(/<rect(?: class="(\w+)")?/g)].map((m) => m[1] ?? 'none'),
      ['none', 'none', 'up', 'partial', 'down'],
    );
    assert.match(svg, /<title>No check yet<\/title>/);
    assert.match(svg, /aria-label="Latest 3 checks: 1 up, 2 with failures"/);
    assert.equal(checkBars([slot({})], 1).value.match(/<rect/g)!.length, 1);
    assert.equal(
      checkBars(
        Array.from({ length: 50 }, () => slot({})),
        40,
      ).value.match(/<rect/g)!.length,
      40,
      'the latest 40 only',
    );
  });
});

describe('the days of a status page', () => {
  const grades: [number | null, string][] = [
    [null, ''],
    [100, 'b-ok'],
    [99.996, 'b-ok'],
    [99.99, 'b-minor'],
    [99, 'b-minor'],
    [98.99, 'b-warn'],
    [95, 'b-warn'],
    [94.9, 'b-poor'],
    [90, 'b-poor'],
    [89.9, 'b-bad'],
    [57, 'b-bad'],
    [0, 'b-bad'],
  ];
  for (const [uptime, grade] of grades) it(`colours ${uptime}% as ${grade || 'no data'}`, () => assert.equal(dayGrade(uptime), grade));

  const incident = (started_at: string, ended_at: string | null, duration: number, kind: PublicIncident['kind']): PublicIncident => ({
    monitor_id: 'm',
    started_at,
    ended_at,
    duration,
    kind,
  });
  const now = new Date('2026-03-02T12:00:00Z');
  const overnight = incident('2026-02-28T23:30:00.000000Z', '2026-03-01T00:30:00.000000Z', 3600, 'timeout');
  const afternoon = incident('2026-03-01T14:02:00.000000Z', '2026-03-01T14:09:00.000000Z', 420, 'status');
  const ongoing = incident('2026-03-02T11:00:00.000000Z', null, 3600, 'dns');

  it('puts each incident on every day it overlaps', () => {
    const days = ['2026-02-28', '2026-03-01', '2026-03-02'].map((day) => ({ day, uptime: 99 }));
    assert.deepEqual(incidentsByDay(days, [overnight, afternoon, ongoing], now), [[overnight], [overnight, afternoon], [ongoing]]);
  });

  it('gives the figure and the incidents of a day, with the kind of their cause and no text of it', () => {
    assert.equal(
      dayText({ day: '2026-03-01', uptime: 97.43 }, [overnight, afternoon]),
      [
        '2026-03-01: 97.43% uptime',
        'Down from 2026-02-28 23:30 UTC for 1 h: not responding',
        'Down from 14:02 UTC for 7 min: error responses',
      ].join('\n'),
    );
    assert.equal(
      dayText({ day: '2026-03-02', uptime: 95.8 }, [ongoing]),
      '2026-03-02: 95.80% uptime\nDown from 11:00 UTC ongoing, 1 h so far: name not resolving',
    );
    assert.equal(dayText({ day: '2026-03-03', uptime: 100 }, []), '2026-03-03: 100% uptime');
    assert.equal(dayText({ day: '2026-03-03', uptime: null }, []), '2026-03-03: no data');
    const many = Array.from({ length: 8 }, () => afternoon);
    assert.match(dayText({ day: '2026-03-01', uptime: 80 }, many), /\nand 3 more$/);
  });

  it('draws a red day red for its share of downtime only, so 57 % is not a day down throughout', () => {
    const svg = uptimeBars(
      [
        { day: '2026-03-01', uptime: 57 },
        { day: '2026-03-02', uptime: 0 },
      ],
      [],
      now,
    ).value;
    const downs = [...svg.matchAll(/class="day-down" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    assert.deepEqual(downs, [
      [19.4, 14.6],
      [0, 34],
    ]);
  });
});
