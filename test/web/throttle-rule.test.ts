import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FORGET_AFTER_MS,
  nextAttemptAt,
  signInTiers,
  tiers,
  verdict,
  type Counters,
  type Failures,
} from '../../control-plane/src/accounts/throttle-rule.ts';

const T = Date.parse('2026-03-01T12:00:00Z');
const s = 1000;
const min = 60 * s;
const f = (count: number, lastAt: number | null = T): Failures => ({ count, lastAt });

describe('the sign-in throttle rule', () => {
  const waits: [string, Failures, keyof typeof tiers, number, number][] = [
    // what, counter, tier, now, next attempt at
    ['never failed', f(0, null), 'pair', T, T],
    ['4 failures: still free', f(4), 'pair', T, T],
    ['5th failure: a minute', f(5), 'pair', T, T + min],
    ['6th: two minutes', f(6), 'pair', T, T + 2 * min],
    ['7th: four', f(7), 'pair', T, T + 4 * min],
    ['8th: eight', f(8), 'pair', T, T + 8 * min],
    ['9th: capped at fifteen', f(9), 'pair', T, T + 15 * min],
    ['50th: still fifteen', f(50), 'pair', T, T + 15 * min],
    ['the delay counts from the last failure', f(5), 'pair', T + 30 * s, T + min],
    ['past the delay: at once', f(6), 'pair', T + 3 * min, T + 3 * min],
    ['an hour quiet: forgotten', f(50), 'pair', T + FORGET_AFTER_MS, T + FORGET_AFTER_MS],
    ['account: 19 free', f(19), 'account', T, T],
    ['account: 20th failure, a minute', f(20), 'account', T, T + min],
    ['address: 29 free', f(29), 'address', T, T],
    ['address: 30th failure, a minute', f(30), 'address', T, T + min],
    ['address: 32nd, four minutes', f(32), 'address', T, T + 4 * min],
  ];
  for (const [what, counter, tier, now, at] of waits) {
    it(`next attempt (${tier}, ${what})`, () => assert.equal(nextAttemptAt(counter, tiers[tier], now), at));
  }

  it('checks the per-account tier only from addresses the account never signed in from', () => {
    assert.deepEqual(signInTiers(false), ['pair', 'account', 'address']);
    assert.deepEqual(signInTiers(true), ['pair', 'address']);
  });

  const verdicts: [string, Counters, number, ReturnType<typeof verdict>][] = [
    [
      'nothing counted: goes ahead, counted everywhere',
      { pair: f(0, null), account: f(0, null), address: f(0, null) },
      T,
      { allowed: true, counters: { pair: f(1), account: f(1), address: f(1) } },
    ],
    [
      "an attacker's pair is full: held back a minute",
      { pair: f(5), account: f(5), address: f(5) },
      T + 10 * s,
      { allowed: false, retryAfterSeconds: 50, by: 'pair' },
    ],
    [
      'the same account from a fresh address: goes ahead',
      { pair: f(0, null), account: f(5), address: f(0, null) },
      T + 10 * s,
      { allowed: true, counters: { pair: f(1, T + 10 * s), account: f(6, T + 10 * s), address: f(1, T + 10 * s) } },
    ],
    [
      'spread over addresses, the account is full: a fresh address waits',
      { pair: f(0, null), account: f(21), address: f(0, null) },
      T,
      { allowed: false, retryAfterSeconds: 120, by: 'account' },
    ],
    [
      'the account is full, but the address is known: no account tier, goes ahead',
      { pair: f(0, null), address: f(0, null) },
      T,
      { allowed: true, counters: { pair: f(1), address: f(1) } },
    ],
    [
      'an address failed 30 times across accounts',
      { pair: f(0, null), account: f(0, null), address: f(30) },
      T,
      { allowed: false, retryAfterSeconds: 60, by: 'address' },
    ],
    [
      'the longest wait wins',
      { pair: f(6), account: f(0, null), address: f(31) },
      T + 30 * s,
      { allowed: false, retryAfterSeconds: 90, by: 'pair' },
    ],
    [
      'a counter an hour quiet starts again from one',
      { pair: f(40, T - FORGET_AFTER_MS), address: f(2, T - min) },
      T,
      { allowed: true, counters: { pair: f(1), address: f(3) } },
    ],
    [
      'a counter short of an hour quiet keeps counting',
      { pair: f(40, T - FORGET_AFTER_MS + 1) },
      T,
      { allowed: true, counters: { pair: f(41) } },
    ],
    [
      "another process's clock a little ahead: the last failure never goes back",
      { pair: f(2, T + 2 * s) },
      T,
      { allowed: true, counters: { pair: f(3, T + 2 * s) } },
    ],
    ['retry-after rounds up to whole seconds', { pair: f(5, T) }, T + 59_001, { allowed: false, retryAfterSeconds: 1, by: 'pair' }],
  ];
  for (const [what, counters, now, expected] of verdicts) {
    it(`verdict: ${what}`, () => assert.deepEqual(verdict(counters, now), expected));
  }
});
