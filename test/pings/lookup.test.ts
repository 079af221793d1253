import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchLookups, type HeartbeatLookup } from '../../shared/src/pings/lookup.ts';

/** A store whose answers the test releases one lookup at a time. */
function heldStore(known: Iterable<string>) {
  const ids = new Set(known);
  const calls: { ids: string[]; answer: () => void; fail: (err: Error) => void }[] = [];
  const waiters: (() => void)[] = [];
  const lookup: HeartbeatLookup = (asked) =>
    new Promise((resolve, reject) => {
      calls.push({ ids: [...asked], answer: () => resolve(asked.filter((id) => ids.has(id))), fail: reject });
      waiters.splice(0).forEach((w) => w());
    });
  /** Resolves once the store has been asked `n` times in all. */
  const asked = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (calls.length >= n ? resolve() : waiters.push(check));
      check();
    });
  return { lookup, calls, asked };
}

describe('batched heartbeat lookups', () => {
  it('asks the store once for the ids of callers that came in the same turn', async () => {
    const store = heldStore(['a', 'c']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 60_000 });
    const answers = Promise.all(['a', 'b', 'c'].map(isKnown));
    await store.asked(1);
    store.calls[0]!.answer();
    assert.deepEqual(await answers, [true, false, true]);
    assert.deepEqual(
      store.calls.map((c) => c.ids),
      [['a', 'b', 'c']],
    );
  });

  it('asks once for an id that several callers want', async () => {
    const store = heldStore(['a']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 60_000 });
    const answers = Promise.all([isKnown('a'), isKnown('a'), isKnown('a')]);
    await store.asked(1);
    store.calls[0]!.answer();
    assert.deepEqual(await answers, [true, true, true]);
    assert.deepEqual(store.calls[0]!.ids, ['a']);
  });

  it('splits a crowd of ids into lookups of at most maxBatch', async () => {
    const store = heldStore(['a', 'e']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 60_000, maxBatch: 2 });
    const answers = Promise.all(['a', 'b', 'c', 'd', 'e'].map(isKnown));
    await store.asked(3);
    store.calls.forEach((c) => c.answer());
    assert.deepEqual(await answers, [true, false, false, false, true]);
    assert.deepEqual(
      store.calls.map((c) => c.ids),
      [['a', 'b'], ['c', 'd'], ['e']],
    );
  });

  it('keeps ids asked while every lookup slot is busy for one lookup when a slot frees', async () => {
    const store = heldStore(['a', 'b', 'c']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 60_000, maxInFlight: 1 });
    const first = isKnown('a');
    await store.asked(1);
    const later = Promise.all([isKnown('b'), isKnown('c'), isKnown('z')]);
    // One lookup at a time: the next ones wait for the first answer, then go as one.
    assert.equal(store.calls.length, 1);
    store.calls[0]!.answer();
    assert.equal(await first, true);
    await store.asked(2);
    store.calls[1]!.answer();
    assert.deepEqual(await later, [true, true, false]);
    assert.deepEqual(
      store.calls.map((c) => c.ids),
      [['a'], ['b', 'c', 'z']],
    );
  });

  it('fails every caller of a lookup that fails, and serves the next callers', async () => {
    const store = heldStore(['a']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 60_000 });
    const failing = Promise.allSettled([isKnown('a'), isKnown('b')]);
    await store.asked(1);
    store.calls[0]!.fail(new Error('connection refused'));
    assert.deepEqual(
      (await failing).map((r) => r.status),
      ['rejected', 'rejected'],
    );
    const next = isKnown('a');
    await store.asked(2);
    store.calls[1]!.answer();
    assert.equal(await next, true);
  });

  it('fails the callers of a lookup that does not answer in time, and frees its slot', async () => {
    const store = heldStore(['a']);
    const isKnown = batchLookups(store.lookup, { timeoutMs: 5, maxInFlight: 1 });
    await assert.rejects(isKnown('a'), /heartbeat lookup took longer than 5 ms/);
    const next = isKnown('a');
    await store.asked(2);
    store.calls[1]!.answer();
    assert.equal(await next, true);
  });
});
