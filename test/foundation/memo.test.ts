import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedMemo } from '../../shared/src/memo.ts';

describe('boundedMemo', () => {
  it('computes a key once, and an answer of undefined once too', () => {
    const asked: string[] = [];
    const memo = boundedMemo((k: string) => (asked.push(k), k === 'none' ? undefined : k.length));
    assert.equal(memo('abc'), 3);
    assert.equal(memo('abc'), 3);
    assert.equal(memo('none'), undefined);
    assert.equal(memo('none'), undefined);
    assert.deepEqual(asked, ['abc', 'none']);
  });

  it('forgets everything once full, then keeps again', () => {
    const asked: number[] = [];
    const memo = boundedMemo((k: number) => (asked.push(k), k * 2), 3);
    for (const k of [1, 2, 3, 1]) memo(k);
    assert.deepEqual(asked, [1, 2, 3]);
    memo(4); // full: 1, 2 and 3 are forgotten
    memo(1);
    memo(4);
    assert.deepEqual(asked, [1, 2, 3, 4, 1]);
  });

  it('keeps nothing for a key whose computing throws', () => {
    let calls = 0;
    const memo = boundedMemo((k: string) => {
      calls++;
      throw new Error(`bad ${k}`);
    });
    assert.throws(() => memo('x'), /bad x/);
    assert.throws(() => memo('x'), /bad x/);
    assert.equal(calls, 2);
  });
});
