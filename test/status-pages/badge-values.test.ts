import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  badgeColors,
  badgeLabel,
  badgeStatus,
  endpointJson,
  formatMs,
  formatPercent,
  parseBadge,
  responseBadge,
  statusBadge,
  uptimeBadge,
  uptimeColor,
  type BadgeStatus,
  type ParsedBadge,
} from '../../control-plane/src/status-pages/badge-values.ts';
import { figureMemo } from '../../control-plane/src/status-pages/badges.ts';
import type { ComponentState } from '../../control-plane/src/status-pages/overall.ts';
import type { HeartbeatStatus } from '../../control-plane/src/heartbeats/state.ts';

// Monitor statuses: 0 pending, 1 up, 2 down, 3 paused, 4 degraded.
const m = (status: number, in_maintenance = false): ComponentState => ({ type: 'monitor', status, in_maintenance });
const h = (status: HeartbeatStatus, in_maintenance = false): ComponentState => ({ type: 'heartbeat', status, in_maintenance });

describe('the word a status badge says', () => {
  const rows: [string, ComponentState, BadgeStatus][] = [
    ['an up monitor', m(1), 'operational'],
    ['a degraded monitor', m(4), 'degraded'],
    ['a down monitor', m(2), 'down'],
    ['a paused monitor', m(3), 'paused'],
    ['a monitor never checked', m(0), 'pending'],
    ['a monitor of a status it does not know', m(9), 'pending'],
    ['a down monitor under maintenance', m(2, true), 'maintenance'],
    ['a paused monitor under maintenance', m(3, true), 'maintenance'],
    ['an up heartbeat', h('up'), 'operational'],
    ['a running heartbeat', h('running'), 'operational'],
    ['a late heartbeat', h('late'), 'degraded'],
    ['a down heartbeat', h('down'), 'down'],
    ['a paused heartbeat', h('paused'), 'paused'],
    ['a heartbeat never pinged', h('new'), 'pending'],
    ['a late heartbeat under maintenance', h('late', true), 'maintenance'],
  ];
  for (const [name, c, expected] of rows) {
    it(`says ${expected} for ${name}`, () => assert.equal(badgeStatus(c), expected));
  }
});

describe('reading a badge address', () => {
  const ok = (kind: string, format: string, window: string, stat: string, label?: string): ParsedBadge => ({
    ok: true,
    request: { kind, format, window, stat, label } as never,
  });
  const rows: [string, string, Record<string, unknown>, ParsedBadge][] = [
    ['a status as SVG', 'status.svg', {}, ok('status', 'svg', '24h', 'avg')],
    ['a status as JSON, a window it does not read ignored', 'status.json', { window: 'forever' }, ok('status', 'json', '24h', 'avg')],
    ['an uptime over 30 days by default', 'uptime.svg', {}, ok('uptime', 'svg', '30d', 'avg')],
    ['an uptime over 90 days', 'uptime.json', { window: '90d' }, ok('uptime', 'json', '90d', 'avg')],
    ['an average response time over 24 hours by default', 'response.svg', {}, ok('response', 'svg', '24h', 'avg')],
    ['a p95 response time over 7 days', 'response.svg', { window: '7d', stat: 'p95' }, ok('response', 'svg', '7d', 'p95')],
    ['a label of its own, other fields ignored', 'status.svg', { label: 'API', v: '2' }, ok('status', 'svg', '24h', 'avg', 'API')],
    ['no label', 'status.svg', { label: '' }, ok('status', 'svg', '24h', 'avg', '')],
    [
      'an unknown kind',
      'latency.svg',
      {},
      { ok: false, status: 404, message: 'No such badge: use status, uptime or response, as .svg or .json.' },
    ],
    [
      'an unknown format',
      'status.png',
      {},
      { ok: false, status: 404, message: 'No such badge: use status, uptime or response, as .svg or .json.' },
    ],
    ['no format', 'status', {}, { ok: false, status: 404, message: 'No such badge: use status, uptime or response, as .svg or .json.' }],
    ['a window not offered', 'uptime.svg', { window: '1y' }, { ok: false, status: 400, message: 'window: use one of 24h, 7d, 30d, 90d.' }],
    [
      'a window given twice',
      'uptime.svg',
      { window: ['7d', '30d'] },
      { ok: false, status: 400, message: 'window: use one of 24h, 7d, 30d, 90d.' },
    ],
    [
      'a window named like an object field',
      'uptime.svg',
      { window: 'toString' },
      { ok: false, status: 400, message: 'window: use one of 24h, 7d, 30d, 90d.' },
    ],
    ['a stat not offered', 'response.json', { stat: 'p99' }, { ok: false, status: 400, message: 'stat: use one of avg, p95.' }],
    ['a label given twice', 'status.svg', { label: ['a', 'b'] }, { ok: false, status: 400, message: 'label: give it once.' }],
  ];
  for (const [name, file, query, expected] of rows) {
    it(`reads ${name}`, () => assert.deepEqual(parseBadge(file, query), expected));
  }
});

describe('what a badge says', () => {
  it('colours each status word', () => {
    assert.deepEqual(statusBadge('API', 'operational'), { label: 'API', message: 'operational', color: badgeColors.green });
    assert.equal(statusBadge('API', 'degraded').color, badgeColors.amber);
    assert.equal(statusBadge('API', 'down').color, badgeColors.red);
    assert.equal(statusBadge('API', 'maintenance').color, badgeColors.blue);
    assert.equal(statusBadge('API', 'paused').color, badgeColors.grey);
    assert.equal(statusBadge('API', 'pending').color, badgeColors.grey);
  });

  const uptimes: [number, string, string][] = [
    [100, '100%', badgeColors.green],
    [99.999, '100%', badgeColors.green],
    [99.95, '99.95%', badgeColors.green],
    [99.9, '99.90%', badgeColors.green],
    [99.5, '99.50%', badgeColors.olive],
    [99, '99.00%', badgeColors.olive],
    [97.3, '97.3%', badgeColors.amber],
    [95, '95.0%', badgeColors.amber],
    [92.857, '92.9%', badgeColors.orange],
    [90, '90.0%', badgeColors.orange],
    [42, '42.0%', badgeColors.red],
    [0, '0.0%', badgeColors.red],
  ];
  for (const [percent, message, color] of uptimes) {
    it(`writes an uptime of ${percent} as ${message}`, () => {
      assert.equal(formatPercent(percent), message);
      assert.equal(uptimeColor(percent), color);
      assert.deepEqual(uptimeBadge('uptime 30d', percent), { label: 'uptime 30d', message, color });
    });
  }

  it('writes response times in ms, then seconds, in one neutral colour, and "no data" without checks', () => {
    assert.deepEqual([0.4, 87.4, 999.4, 1240, 9999, 12_345].map(formatMs), ['0 ms', '87 ms', '999 ms', '1.24 s', '10.00 s', '12.3 s']);
    assert.deepEqual(responseBadge('avg response 24h', 87), { label: 'avg response 24h', message: '87 ms', color: badgeColors.info });
    assert.deepEqual(responseBadge('avg response 24h', null), { label: 'avg response 24h', message: 'no data', color: badgeColors.grey });
    assert.deepEqual(uptimeBadge('uptime 7d', null), { label: 'uptime 7d', message: 'no data', color: badgeColors.grey });
  });

  it('labels each kind, a label asked for first, a long one cut', () => {
    const base = { window: '7d', stat: 'avg', label: undefined } as const;
    assert.equal(badgeLabel({ ...base, kind: 'status' }, 'Checkout'), 'Checkout');
    assert.equal(badgeLabel({ ...base, kind: 'uptime' }, 'Checkout'), 'uptime 7d');
    assert.equal(badgeLabel({ ...base, kind: 'response' }, 'Checkout'), 'avg response 7d');
    assert.equal(badgeLabel({ ...base, kind: 'response', stat: 'p95' }, 'Checkout'), 'p95 response 7d');
    assert.equal(badgeLabel({ ...base, kind: 'uptime', label: 'API uptime' }, 'Checkout'), 'API uptime');
    assert.equal(badgeLabel({ ...base, kind: 'status', label: '' }, 'Checkout'), '');
    const long = badgeLabel({ ...base, kind: 'status' }, 'x'.repeat(100));
    assert.equal(long.length, 60);
    assert.ok(long.endsWith('…'));
  });

  it('gives Shields its endpoint schema', () => {
    assert.deepEqual(endpointJson(statusBadge('API', 'down')), {
      schemaVersion: 1,
      label: 'API',
      message: 'down',
      color: badgeColors.red,
      labelColor: badgeColors.label,
      cacheSeconds: 300,
    });
  });

  // WCAG 2.x relative luminance and contrast ratio.
  const luminance = (hex: string) => {
    const n = parseInt(hex.slice(1), 16);
    const lin = (c: number) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(n >> 16) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
  };
  for (const [name, hex] of Object.entries(badgeColors)) {
    it(`keeps white text on ${name} (${hex}) readable at 4.5:1`, () => {
      const ratio = 1.05 / (luminance(hex) + 0.05);
      assert.ok(ratio >= 4.5, `${hex}: ${ratio.toFixed(2)}:1`);
    });
  }
});

describe('remembering figures of badges', () => {
  const setup = (max = 10) => {
    let now = 0;
    let computed = 0;
    const memo = figureMemo({ ttlMs: 60_000, max, now: () => now });
    const figure = (key: string, value = 1) =>
      memo(key, async () => {
        computed++;
        return value;
      });
    return { memo, figure, at: (t: number) => (now = t), computed: () => computed };
  };

  it('computes a figure once while it is fresh, and again once it is not', async () => {
    const s = setup();
    assert.equal(await s.figure('a', 1), 1);
    s.at(59_999);
    assert.equal(await s.figure('a', 2), 1, 'fresh: the same');
    assert.equal(s.computed(), 1);
    s.at(60_000);
    assert.equal(await s.figure('a', 2), 2, 'stale: computed again');
    assert.equal(s.computed(), 2);
  });

  it('shares one computation among requests that come while it runs', async () => {
    const s = setup();
    const [x, y] = await Promise.all([s.figure('a', 7), s.figure('a', 8)]);
    assert.deepEqual([x, y, s.computed()], [7, 7, 1]);
  });

  it('does not remember a failure', async () => {
    const s = setup();
    await assert.rejects(s.memo('a', () => Promise.reject(new Error('database gone'))));
    assert.equal(await s.figure('a', 3), 3);
  });

  it('keeps at most so many figures, the oldest going first', async () => {
    const s = setup(2);
    await s.figure('a', 1);
    await s.figure('b', 2);
    await s.figure('c', 3);
    assert.equal(s.computed(), 3);
    assert.equal(await s.figure('c', 30), 3, 'the newest kept');
    assert.equal(await s.figure('a', 10), 10, 'the oldest forgotten');
  });
});
