import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  afterDelivery,
  createPartitionClock,
  judgedUntil,
  unknownBacklog,
  type Backlog,
} from '../../control-plane/src/heartbeats/deadline/partition-clock.ts';
import { createDeadlineTimers } from '../../control-plane/src/heartbeats/deadline/timers.ts';
import { manualClock } from './manual-clock.ts';

const NOW = 1_000_000;

describe('the instant a partition is judged until', () => {
  const rows: { name: string; backlog: Backlog; until: number }[] = [
    { name: 'caught up: the clock', backlog: { caughtUp: true, newest: NOW - 5_000 }, until: NOW },
    { name: 'replaying: the newest ping delivered', backlog: { caughtUp: false, newest: NOW - 130_000 }, until: NOW - 130_000 },
    {
      name: 'replaying, the newest ping stamped ahead of the clock: the clock',
      backlog: { caughtUp: false, newest: NOW + 2_000 },
      until: NOW,
    },
    { name: 'nothing known yet (just taken, not caught up): nothing is judged', backlog: unknownBacklog, until: -Infinity },
  ];
  for (const r of rows) it(r.name, () => assert.equal(judgedUntil(r.backlog, NOW), r.until));

  const deliveries: { name: string; before: Backlog; at: number; pending: number; after: Backlog }[] = [
    {
      name: 'a ping with others behind it: behind, newest moves',
      before: { caughtUp: true, newest: 10 },
      at: 20,
      pending: 5,
      after: { caughtUp: false, newest: 20 },
    },
    {
      name: 'the last ping while caught up: still caught up',
      before: { caughtUp: true, newest: 10 },
      at: 20,
      pending: 0,
      after: { caughtUp: true, newest: 20 },
    },
    {
      name: 'the last ping of a backlog: caught up only once the consumer says so',
      before: { caughtUp: false, newest: 10 },
      at: 20,
      pending: 0,
      after: { caughtUp: false, newest: 20 },
    },
    {
      name: 'a redelivered older ping: newest stays',
      before: { caughtUp: false, newest: 30 },
      at: 20,
      pending: 3,
      after: { caughtUp: false, newest: 30 },
    },
  ];
  for (const d of deliveries) it(d.name, () => assert.deepEqual(afterDelivery(d.before, d.at, d.pending), d.after));
});

describe('a partition clock under the deadline heap', () => {
  const setup = () => {
    const base = manualClock(NOW);
    const clock = createPartitionClock(base);
    const due: string[] = [];
    const timers = createDeadlineTimers({ clock, onDue: (ids) => due.push(...ids) });
    const turn = () => new Promise((r) => setImmediate(r));
    return { base, clock, due, timers, turn };
  };

  it('fires nothing while the partition has not been seen caught up, however late the clock', async () => {
    const { base, timers, due, turn } = setup();
    timers.set('a', NOW - 60_000);
    await turn();
    base.advance(3_600_000);
    await turn();
    assert.deepEqual(due, []);
  });

  it('while a backlog is replayed, fires a deadline once a delivered ping is stamped past it', async () => {
    const { clock, timers, due, turn } = setup();
    clock.delivered(NOW - 300_000, 1_000);
    timers.set('a', NOW - 200_000);
    timers.set('b', NOW - 100_000);
    await turn();
    assert.deepEqual(due, []);
    clock.delivered(NOW - 199_999, 500);
    await turn();
    assert.deepEqual(due, ['a']);
    clock.delivered(NOW - 150_000, 0);
    await turn();
    assert.deepEqual(due, ['a'], 'b waits: its instant is not reached, and the last ping is not proof of being caught up');
    clock.setCaughtUp(true);
    await turn();
    assert.deepEqual(due, ['a', 'b'], 'caught up: the clock decides');
  });

  it('caught up, fires on the clock; falling behind again holds later deadlines back', async () => {
    const { base, clock, timers, due, turn } = setup();
    clock.setCaughtUp(true);
    timers.set('a', NOW + 1_000);
    timers.set('b', NOW + 5_000);
    await turn();
    base.advance(1_000);
    await turn();
    assert.deepEqual(due, ['a']);
    clock.delivered(NOW + 1_500, 40);
    base.advance(10_000);
    await turn();
    assert.deepEqual(due, ['a'], 'b is past by the clock but not by the pings delivered');
    clock.delivered(NOW + 5_000, 20);
    await turn();
    assert.deepEqual(due, ['a', 'b']);
  });

  it('is never ahead of the process clock', () => {
    const { clock } = setup();
    clock.delivered(NOW + 60_000, 3);
    assert.equal(clock.now(), NOW);
  });
});
