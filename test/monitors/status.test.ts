import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  evaluateMonitor,
  nextStreak,
  noStreak,
  quorumOf,
  requiredFailures,
  staleAfter,
  statusFor,
  streakLength,
  streakSince,
  type MonitorHealth,
  type RegionVote,
  type Streak,
  type VerdictPolicy,
} from '../../control-plane/src/monitors/status.ts';

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

  const out = (region: string, ok: boolean, age = 10): RegionVote => ({ ...v(region, ok, age), abstain: true });
  const quorumRows: [string, MonitorHealth, number | null, RegionVote[], MonitorHealth][] = [
    ['with quorum 1, goes down when any region fails', 1, 1, [v('eu', false), v('us', true), v('ap', true)], 2],
    ['with quorum 3, stays up when 2 of 3 fail', 1, 3, [v('eu', false), v('us', false), v('ap', true)], 1],
    ['with quorum 3, goes down when 3 of 3 fail', 1, 3, [v('eu', false), v('us', false), v('ap', false)], 2],
    ['with quorum 2 of 3, a degraded failing region does not vote', 1, 2, [out('eu', false), v('us', false), v('ap', true)], 1],
    ['with quorum 2, the two regions left both failing put it down', 1, 2, [out('eu', true), v('us', false), v('ap', false)], 2],
    [
      'never asks more failures than regions vote: 1 of 1 left with quorum 2',
      1,
      2,
      [out('eu', true), v('us', false, 3600), v('ap', false)],
      2,
    ],
    ['keeps its status when every fresh region is degraded', 1, null, [out('eu', false), out('us', false)], 1],
    ['a degraded region does not bring a down monitor back up', 2, null, [out('eu', true), v('us', false)], 2],
    [
      'majority of the voting regions when no quorum is set: 2 of 3 left',
      1,
      null,
      [out('eu', true), v('us', false), v('ap', true), v('sa', false)],
      2,
    ],
  ];
  for (const [name, current, quorum, votes, status] of quorumRows) {
    it(name, () => {
      const e = evaluateMonitor(current, votes, now, staleAfter(60), { quorum, confirmDown: 1, confirmUp: 1 });
      assert.equal(e.status, status);
    });
  }

  it('lists the abstaining regions apart from the voting ones', () => {
    const e = evaluateMonitor(1, [out('eu', false), v('us', true), out('ap', false, 3600)], now, staleAfter(60));
    assert.deepEqual(e.voting, ['us']);
    assert.deepEqual(e.abstained, ['eu']);
    assert.equal(e.required, 1);
  });

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

describe('confirmation over consecutive rounds', () => {
  // Rounds are slots 60 s apart; r(k) is the k-th one.
  const r = (k: number) => Date.parse('2026-11-21T12:00:00Z') + k * 60_000;
  const policy = (confirmDown: number, confirmUp: number): VerdictPolicy => ({ quorum: null, confirmDown, confirmUp });

  // [name, policy, start status, per round: [round, failing?], expected status after each]
  const rows: [string, VerdictPolicy, MonitorHealth, [number, boolean][], MonitorHealth[]][] = [
    [
      'with 1 and 1, follows every round',
      policy(1, 1),
      1,
      [
        [1, true],
        [2, false],
        [3, true],
      ],
      [2, 1, 2],
    ],
    [
      'goes down on the third failing round',
      policy(3, 1),
      1,
      [
        [1, true],
        [2, true],
        [3, true],
      ],
      [1, 1, 2],
    ],
    [
      'a passing round resets the failing count',
      policy(3, 1),
      1,
      [
        [1, true],
        [2, true],
        [3, false],
        [4, true],
        [5, true],
      ],
      [1, 1, 1, 1, 1],
    ],
    [
      'stays down until two passing rounds',
      policy(1, 2),
      2,
      [
        [1, false],
        [2, true],
        [3, false],
        [4, false],
      ],
      [2, 2, 2, 1],
    ],
    ['a pending monitor is up at its first passing round', policy(3, 3), 0, [[1, false]], [1]],
    [
      'a pending monitor stays pending while failing is not yet confirmed',
      policy(2, 1),
      0,
      [
        [1, true],
        [2, true],
      ],
      [0, 2],
    ],
    [
      'the same round reported twice counts once',
      policy(2, 1),
      1,
      [
        [1, true],
        [1, true],
        [1, true],
      ],
      [1, 1, 1],
    ],
    [
      'a late result of an older round changes nothing',
      policy(2, 1),
      1,
      [
        [2, true],
        [1, true],
      ],
      [1, 1],
    ],
    [
      'a round revised as its regions report is counted once, as revised',
      policy(2, 1),
      1,
      [
        [1, true],
        [2, false],
        [2, true],
      ],
      [1, 1, 2],
    ],
  ];
  for (const [name, p, start, rounds, expected] of rows) {
    it(name, () => {
      let status = start;
      let streak: Streak = noStreak;
      const seen: MonitorHealth[] = [];
      for (const [k, failing] of rounds) {
        streak = nextStreak(streak, failing ? -1 : 1, r(k));
        status = statusFor(status, streakLength(streak), p);
        seen.push(status);
      }
      assert.deepEqual(seen, expected);
    });
  }

  it('dates a run from the round it began, through revisions', () => {
    let s = nextStreak(noStreak, 1, r(1));
    s = nextStreak(s, -1, r(2));
    s = nextStreak(s, -1, r(3));
    assert.equal(streakLength(s), -2);
    assert.equal(streakSince(s), r(2));
    s = nextStreak(s, 1, r(3));
    assert.equal(streakLength(s), 1);
    assert.equal(streakSince(s), r(3));
    s = nextStreak(s, -1, r(3));
    assert.equal(streakSince(s), r(2));
  });

  it('counts rounds from the voting results through evaluateMonitor', () => {
    const at = (k: number) => new Date(r(k));
    const p = policy(2, 1);
    const clock = new Date(r(3));
    const first = evaluateMonitor(1, [{ region: 'eu', ok: false, scheduledAt: at(1) }], clock, staleAfter(60), p, noStreak);
    assert.equal(first.status, 1);
    const second = evaluateMonitor(1, [{ region: 'eu', ok: false, scheduledAt: at(2) }], clock, staleAfter(60), p, first.streak);
    assert.equal(second.status, 2);
    assert.equal(second.transition, 'down');
    assert.equal(streakSince(second.streak), r(1));
  });

  it('caps the quorum at the regions voting', () => {
    assert.deepEqual([requiredFailures(2, 3), requiredFailures(2, 1), requiredFailures(null, 4), requiredFailures(5, 0)], [2, 1, 3, 0]);
  });
});
