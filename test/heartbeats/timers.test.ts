import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDeadlineTimers } from '../../control-plane/src/heartbeats/deadline/timers.ts';
import { manualClock } from './manual-clock.ts';

const T0 = Date.parse('2026-03-10T12:00:00Z');

function setup() {
  const clock = manualClock(T0);
  const fired: string[][] = [];
  const timers = createDeadlineTimers({ clock, onDue: (ids) => fired.push(ids) });
  const settle = () => new Promise((r) => setImmediate(r));
  return { clock, fired, timers, settle };
}

describe('deadline timers', () => {
  it('fires a deadline when the clock reaches it, not before', async () => {
    const { clock, fired, timers, settle } = setup();
    timers.set('a', T0 + 1_000);
    await settle();
    clock.advance(999);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, [['a']]);
    assert.equal(timers.size, 0);
  });

  it('hands every deadline of the same instant over in one call', async () => {
    const { clock, fired, timers, settle } = setup();
    for (let i = 0; i < 1_000; i++) timers.set(`hb-${i}`, T0 + 60_000);
    timers.set('later', T0 + 60_001);
    await settle();
    clock.advance(60_000);
    assert.equal(fired.length, 1);
    assert.equal(fired[0]!.length, 1_000);
    clock.advance(1);
    assert.deepEqual(fired[1], ['later']);
  });

  it('hands deadlines that passed while the process slept over together, earliest first', async () => {
    const { clock, fired, timers, settle } = setup();
    timers.set('b', T0 + 2_000);
    timers.set('a', T0 + 1_000);
    await settle();
    clock.advance(5_000);
    assert.deepEqual(fired, [['a', 'b']]);
  });

  it('moves a deadline that is set again, and forgets one set to null', async () => {
    const { clock, fired, timers, settle } = setup();
    timers.set('a', T0 + 1_000);
    timers.set('b', T0 + 1_000);
    timers.set('a', T0 + 3_000);
    timers.set('b', null);
    await settle();
    clock.advance(2_000);
    assert.deepEqual(fired, []);
    assert.equal(timers.dueOf('a'), T0 + 3_000);
    assert.equal(timers.dueOf('b'), undefined);
    clock.advance(1_000);
    assert.deepEqual(fired, [['a']]);
  });

  it('fires a deadline already past on the next turn', async () => {
    const { fired, timers, settle } = setup();
    timers.set('late', T0 - 5_000);
    await settle();
    await settle();
    assert.deepEqual(fired, [['late']]);
  });

  it('keeps a fresher deadline over a bulk load', async () => {
    const { timers } = setup();
    timers.set('a', T0 + 5_000);
    timers.setIfAbsent('a', T0 + 1_000);
    timers.setIfAbsent('b', T0 + 2_000);
    assert.equal(timers.dueOf('a'), T0 + 5_000);
    assert.equal(timers.dueOf('b'), T0 + 2_000);
  });

  it('disarms the deadlines of a partition given back', async () => {
    const { clock, fired, timers, settle } = setup();
    for (const id of ['p1-a', 'p1-b', 'p2-a']) timers.set(id, T0 + 1_000);
    assert.equal(
      timers.clearWhere((id) => id.startsWith('p1-')),
      2,
    );
    await settle();
    clock.advance(1_000);
    assert.deepEqual(fired, [['p2-a']]);
  });

  it('reuses the slots of removed deadlines', async () => {
    const { clock, fired, timers, settle } = setup();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 100; i++) timers.set(`r${round}-${i}`, clock.now() + 10);
      await settle();
      clock.advance(10);
    }
    assert.deepEqual(
      fired.map((ids) => ids.length),
      [100, 100, 100],
    );
    assert.equal(timers.size, 0);
  });

  it('fires nothing after it was stopped', async () => {
    const { clock, fired, timers, settle } = setup();
    timers.set('a', T0 + 1_000);
    await settle();
    timers.stop();
    clock.advance(2_000);
    assert.deepEqual(fired, []);
  });

  it('counts armed deadlines by group and reports how late each fired', async () => {
    const clock = manualClock(T0);
    const lateness: number[] = [];
    const timers = createDeadlineTimers({
      clock,
      onDue: () => {},
      onLateness: (ms) => lateness.push(ms),
      groupOf: (id) => Number(id.split('-')[1]),
    });
    for (let i = 0; i < 6; i++) timers.set(`p-${i % 3}-${i}`, T0 + 1_000 * (i + 1));
    timers.set('p-0-0', T0 + 500);
    assert.deepEqual(
      new Map(timers.countsByGroup()),
      new Map([
        [0, 2],
        [1, 2],
        [2, 2],
      ]),
    );
    timers.clearWhere((id) => id.startsWith('p-1-'));
    assert.deepEqual(
      new Map(timers.countsByGroup()),
      new Map([
        [0, 2],
        [2, 2],
      ]),
    );
    await new Promise((r) => setImmediate(r));
    clock.advance(3_250);
    // p-0-0 at 500, p-2-2 at 3,000 fired at 3,250; p-0-3 and p-2-5 remain.
    assert.deepEqual(lateness, [2_750, 250]);
    assert.deepEqual(
      new Map(timers.countsByGroup()),
      new Map([
        [0, 1],
        [2, 1],
      ]),
    );
  });
});
