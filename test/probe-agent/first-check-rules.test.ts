import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { firstCheckAt, firstCheckWindowMs, type FirstCheckInput } from '../../probe-agent/src/assignments/first-check.ts';

const started = Date.parse('2026-11-26T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('firstCheckAt', () => {
  const base: FirstCheckInput = {
    changedAt: undefined,
    heldChangedAt: undefined,
    since: started,
    now: started + 60_000,
    intervalMs: 60_000,
  };
  const t = started + 59_000;
  const rows: Array<[string, Partial<FirstCheckInput>, number | undefined]> = [
    ['a change heard of just after it was made', { changedAt: iso(t) }, t],
    ['an entry without changed_at (written before it existed)', {}, undefined],
    ['the same changed_at as held (a rename, a new interval)', { changedAt: iso(t), heldChangedAt: iso(t) }, undefined],
    ['a newer changed_at than held (a url edit)', { changedAt: iso(t), heldChangedAt: iso(started + 1_000) }, t],
    ['a change made before the agent started (a restart or a join replays it)', { changedAt: iso(started - 1) }, undefined],
    ['a change made as the agent started', { changedAt: iso(started), now: started + 1_000 }, started],
    ['a change one interval old: a slot has come by', { changedAt: iso(started), now: started + 60_000 }, undefined],
    ['a change just under one interval old', { changedAt: iso(started + 1), now: started + 60_000 }, started + 1],
    ['a change "in the future" (the hosts\' clocks differ)', { changedAt: iso(started + 61_500) }, started + 61_500],
    ['microseconds are dropped, the same way on every agent', { changedAt: '2026-11-26T10:00:59.123456Z' }, started + 59_123],
    [
      'a long interval, but older than the duplicate window',
      { changedAt: iso(started), intervalMs: 3_600_000, now: started + firstCheckWindowMs },
      undefined,
    ],
    [
      'a long interval, inside the duplicate window',
      { changedAt: iso(started), intervalMs: 3_600_000, now: started + firstCheckWindowMs - 1 },
      started,
    ],
    ['a value that is no time', { changedAt: 'yesterday' }, undefined],
  ];
  for (const [name, input, want] of rows) it(name, () => assert.equal(firstCheckAt({ ...base, ...input }), want));
});
