import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHeap } from '../../shared/src/heap.ts';

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The reference model is a plain map, scanned for its minimum. */
function minOf(ref: Map<number, number>): number {
  let min = Infinity;
  for (const due of ref.values()) min = Math.min(min, due);
  return min;
}

describe('createHeap', () => {
  it('matches a sorted reference under random push, pop, remove and update', () => {
    for (const seed of [1, 2, 3, 42, 1234]) {
      const random = prng(seed);
      const heap = createHeap(2);
      const ref = new Map<number, number>();
      const idSpace = 200;
      for (let step = 0; step < 20_000; step++) {
        const op = random();
        const id = Math.floor(random() * idSpace);
        // Coarse due times so ties happen often.
        const due = Math.floor(random() * 500);
        if (op < 0.4) {
          heap.push(id, due);
          ref.set(id, due);
        } else if (op < 0.6) {
          const popped = heap.pop();
          if (ref.size === 0) assert.equal(popped, -1);
          else {
            assert.equal(ref.get(popped), minOf(ref), `seed ${seed} step ${step}: pop returned a non-minimal id`);
            ref.delete(popped);
          }
        } else if (op < 0.8) {
          assert.equal(heap.remove(id), ref.delete(id));
        } else {
          assert.equal(heap.update(id, due), ref.has(id));
          if (ref.has(id)) ref.set(id, due);
        }
        assert.equal(heap.size, ref.size);
        assert.equal(heap.peekDue(), minOf(ref));
        if (ref.size > 0) assert.equal(ref.get(heap.peek()), minOf(ref));
        assert.equal(heap.has(id), ref.has(id));
        assert.equal(Number.isNaN(heap.dueOf(id)) ? undefined : heap.dueOf(id), ref.get(id));
      }
      const drained: number[] = [];
      while (heap.size > 0) drained.push(ref.get(heap.pop())!);
      assert.deepEqual(
        drained,
        [...ref.values()].sort((a, b) => a - b),
      );
    }
  });

  it('pops in due order after growing far past its initial capacity', () => {
    const random = prng(7);
    const heap = createHeap(1);
    const dues: number[] = [];
    for (let id = 0; id < 10_000; id++) {
      const due = random() * 1e9;
      dues.push(due);
      heap.push(id * 3, due);
    }
    const popped: number[] = [];
    for (let id = heap.pop(); id !== -1; id = heap.pop()) popped.push(dues[id / 3]!);
    assert.deepEqual(
      popped,
      [...dues].sort((a, b) => a - b),
    );
    assert.equal(heap.peek(), -1);
    assert.equal(heap.peekDue(), Infinity);
  });

  it('moves an id that is pushed twice instead of duplicating it', () => {
    const heap = createHeap();
    heap.push(5, 100);
    heap.push(6, 50);
    heap.push(5, 10);
    assert.equal(heap.size, 2);
    assert.equal(heap.pop(), 5);
    assert.equal(heap.pop(), 6);
  });

  it('rejects ids that are not non-negative integers', () => {
    const heap = createHeap();
    assert.throws(() => heap.push(-1, 0), RangeError);
    assert.throws(() => heap.push(1.5, 0), RangeError);
    assert.equal(heap.remove(-1), false);
    assert.equal(heap.has(99), false);
  });
});
