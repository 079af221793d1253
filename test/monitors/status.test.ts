import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluateMonitor, quorumOf, staleAfter, type MonitorHealth, type RegionVote } from '../../control-plane/src/monitors/status.ts';

const now = new Date('2026-11-21T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const v = (region: string, ok: boolean, age = 10, error: string | null = ok ? null : 'timeout'): RegionVote => ({
  region,
  ok,
  scheduledAt: ago(age),
  error,
});

describe('monitor status from regional results', () => {
  const rows: [string, MonitorHealth, RegionVote[], MonitorHealth, 'down' | 'up' | null][] = [
    ['stays pending with no result', 0, [], 0, null],
    ['goes up on a first passing result, without an event', 0, [v('eu', true)], 1, null],
    ['goes down from pending when its only region fails', 0, [v('eu', false)], 2, 'down'],
    ['goes down when 1 of 1 region fails', 1, [v('eu', false)], 2, 'down'],
    ['stays up when 1 of 3 regions fails', 1, [v('eu', false), v('us', true), v('ap', true)], 1, null],
    ['goes down when 2 of 3 regions fail', 1, [v('eu', false), v('us', false), v('ap', true)], 2, 'down'],
    ['stays up when 1 of 2 regions fails', 1, [v('eu', false), v('us', true)], 1, null],
    ['goes down when 2 of 2 regions fail', 1, [v('eu', false), v('us', false)], 2, 'down'],
    ['stays down, with no second event, while the quorum still fails', 2, [v('eu', false), v('us', false), v('ap', true)], 2, null],
    ['comes up on the first round below quorum', 2, [v('eu', false), v('us', true), v('ap', true)], 1, 'up'],
    ['ignores a stale region', 1, [v('eu', false), v('us', false, 3600), v('ap', true)], 1, null],
    ['keeps its status when every region is stale', 2, [v('eu', true, 3600)], 2, null],
    ['goes down when 3 of 5 fail', 1, [v('a', false), v('b', false), v('c', false), v('d', true), v('e', true)], 2, 'down'],
    ['stays up when 2 of 5 fail', 1, [v('a', false), v('b', false), v('c', true), v('d', true), v('e', true)], 1, null],
  ];
  for (const [name, current, votes, status, transition] of rows) {
    it(name, () => {
      const e = evaluateMonitor(current, votes, now, staleAfter(60));
      assert.equal(e.status, status);
      assert.equal(e.transition, transition);
    });
  }

  it('names the failing regions and the cause', () => {
    const e = evaluateMonitor(
      1,
      [v('us', false, 10, 'Unexpected status 503'), v('eu', false, 10, 'timeout'), v('ap', true)],
      now,
      staleAfter(60),
    );
    assert.deepEqual(e.failing, ['eu', 'us']);
    assert.deepEqual(e.voting, ['ap', 'eu', 'us']);
    assert.equal(e.cause, 'Unexpected status 503');
  });

  it('computes a majority quorum', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map(quorumOf), [1, 2, 2, 3, 3]);
  });

  it('keeps a vote for three intervals and at least a minute', () => {
    assert.equal(staleAfter(5), 60_000);
    assert.equal(staleAfter(60), 190_000);
  });
});
