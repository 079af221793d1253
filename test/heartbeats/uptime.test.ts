import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heartbeatUptime, mergeSpans, subtractSpans, type Span, type UptimeInput } from '../../control-plane/src/heartbeats/uptime.ts';

const H = 3_600_000;

describe('spans of time', () => {
  const merges: [string, Span[], Span[]][] = [
    ['nothing', [], []],
    [
      'apart, out of order',
      [
        [5, 6],
        [1, 2],
      ],
      [
        [1, 2],
        [5, 6],
      ],
    ],
    [
      'overlapping',
      [
        [1, 4],
        [3, 6],
      ],
      [[1, 6]],
    ],
    [
      'touching',
      [
        [1, 3],
        [3, 5],
      ],
      [[1, 5]],
    ],
    [
      'one inside another',
      [
        [1, 10],
        [3, 4],
      ],
      [[1, 10]],
    ],
    [
      'empty ones left out',
      [
        [3, 3],
        [5, 4],
      ],
      [],
    ],
  ];
  for (const [name, spans, expected] of merges) it(`merges ${name}`, () => assert.deepEqual(mergeSpans(spans), expected));

  const cuts: [string, Span[], Span[], Span[]][] = [
    ['no holes', [[0, 10]], [], [[0, 10]]],
    [
      'a hole inside',
      [[0, 10]],
      [[2, 4]],
      [
        [0, 2],
        [4, 10],
      ],
    ],
    ['a hole over the start', [[0, 10]], [[-5, 3]], [[3, 10]]],
    ['a hole over the end', [[0, 10]], [[8, 20]], [[0, 8]]],
    ['a hole over everything', [[0, 10]], [[-1, 11]], []],
    [
      'holes that overlap each other',
      [[0, 10]],
      [
        [2, 5],
        [4, 6],
      ],
      [
        [0, 2],
        [6, 10],
      ],
    ],
    [
      'a hole between two spans',
      [
        [0, 3],
        [6, 9],
      ],
      [[2, 7]],
      [
        [0, 2],
        [7, 9],
      ],
    ],
  ];
  for (const [name, spans, holes, expected] of cuts) it(`cuts ${name}`, () => assert.deepEqual(subtractSpans(spans, holes), expected));
});

describe('the uptime of a heartbeat over a window', () => {
  // A day's window, ending at 24 h; the heartbeat older than it unless said.
  const day = (over: Partial<UptimeInput>): UptimeInput => ({
    from: 0,
    to: 24 * H,
    createdAt: -100 * H,
    changes: [],
    downSince: null,
    maintenance: [],
    ...over,
  });
  const rows: [string, UptimeInput, number][] = [
    ['never down', day({}), 100],
    [
      'down 6 hours and up again',
      day({
        changes: [
          { kind: 'down', at: 2 * H },
          { kind: 'up', at: 8 * H },
        ],
      }),
      75,
    ],
    [
      'changes given in any order',
      day({
        changes: [
          { kind: 'up', at: 8 * H },
          { kind: 'down', at: 2 * H },
        ],
      }),
      75,
    ],
    ['down since before the window, up 6 hours in', day({ changes: [{ kind: 'up', at: 6 * H }] }), 75],
    [
      'a down before the window, up inside it',
      day({
        changes: [
          { kind: 'down', at: -5 * H },
          { kind: 'up', at: 6 * H },
        ],
      }),
      75,
    ],
    [
      'a period wholly before the window',
      day({
        changes: [
          { kind: 'down', at: -5 * H },
          { kind: 'up', at: -1 * H },
        ],
      }),
      100,
    ],
    ['down for the last 6 hours, still down', day({ changes: [{ kind: 'down', at: 18 * H }], downSince: 18 * H }), 75],
    ['down since before the window, still down', day({ downSince: -3 * H }), 0],
    ['still down, its down change not among those read', day({ downSince: 18 * H }), 75],
    [
      'two periods',
      day({
        changes: [
          { kind: 'down', at: 0 },
          { kind: 'up', at: 3 * H },
          { kind: 'down', at: 12 * H },
          { kind: 'up', at: 15 * H },
        ],
      }),
      75,
    ],
    ['created 12 hours ago, down 6 of them', day({ createdAt: 12 * H, downSince: 18 * H }), 50],
    ['created this instant', day({ createdAt: 24 * H }), 100],
    [
      'down 6 hours, 3 of them under maintenance (left out of both sides)',
      day({
        changes: [
          { kind: 'down', at: 2 * H },
          { kind: 'up', at: 8 * H },
        ],
        maintenance: [[5 * H, 8 * H]],
      }),
      Math.round(100_000 * (1 - 3 / 21)) / 1000,
    ],
    [
      'down only under maintenance',
      day({
        changes: [
          { kind: 'down', at: 2 * H },
          { kind: 'up', at: 4 * H },
        ],
        maintenance: [[0, 6 * H]],
      }),
      100,
    ],
    ['the whole window under maintenance', day({ downSince: -1 * H, maintenance: [[-5 * H, 30 * H]] }), 100],
  ];
  for (const [name, input, expected] of rows) it(`is ${expected}% ${name}`, () => assert.equal(heartbeatUptime(input), expected));
});
