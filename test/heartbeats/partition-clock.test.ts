import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  afterCheck,
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
    {
      name: 'caught up when asked just now: the clock',
      backlog: { caughtUp: true, newest: NOW - 5_000, confirmed: NOW },
      until: NOW,
    },
    {
      name: 'caught up when asked 5 s ago: that instant, not the clock (a ping may wait in the stream since)',
      backlog: { caughtUp: true, newest: NOW - 10_000, confirmed: NOW - 5_000 },
      until: NOW - 5_000,
    },
    {
      name: 'a ping delivered since the last answer: its instant',
      backlog: { caughtUp: true, newest: NOW - 1_000, confirmed: NOW - 5_000 },
      until: NOW - 1_000,
    },
    {
      name: 'replaying: the newest ping delivered',
      backlog: { caughtUp: false, newest: NOW - 130_000, confirmed: NOW - 200_000 },
      until: NOW - 130_000,
    },
    {
      name: 'replaying, the newest ping stamped ahead of the clock: the clock',
      backlog: { caughtUp: false, newest: NOW + 2_000, confirmed: -Infinity },
      until: NOW,
    },
    {
      name: 'an answer asked for ahead of the clock (the clock stepped back): the clock',
      backlog: { caughtUp: true, newest: -Infinity, confirmed: NOW + 3_000 },
      until: NOW,
    },
    { name: 'nothing known yet (just taken, not caught up): nothing is judged', backlog: unknownBacklog, until: -Infinity },
  ];
  for (const r of rows) it(r.name, () => assert.equal(judgedUntil(r.backlog, NOW), r.until));

  const deliveries: { name: string; before: Backlog; at: number; pending: number; after: Backlog }[] = [
    {
      name: 'a ping with others behind it: behind, newest moves',
      before: { caughtUp: true, newest: 10, confirmed: 15 },
      at: 20,
      pending: 5,
      after: { caughtUp: false, newest: 20, confirmed: 15 },
    },
    {
      name: 'the last ping while caught up: still caught up',
      before: { caughtUp: true, newest: 10, confirmed: 15 },
      at: 20,
      pending: 0,
      after: { caughtUp: true, newest: 20, confirmed: 15 },
    },
    {
      name: 'the last ping of a backlog: caught up only once the consumer says so',
      before: { caughtUp: false, newest: 10, confirmed: 5 },
      at: 20,
      pending: 0,
      after: { caughtUp: false, newest: 20, confirmed: 5 },
    },
    {
      name: 'a redelivered older ping: newest stays',
      before: { caughtUp: false, newest: 30, confirmed: 5 },
      at: 20,
      pending: 3,
      after: { caughtUp: false, newest: 30, confirmed: 5 },
    },
  ];
  for (const d of deliveries) it(d.name, () => assert.deepEqual(afterDelivery(d.before, d.at, d.pending), d.after));

  const checks: { name: string; before: Backlog; caughtUp: boolean; askedAt: number; after: Backlog }[] = [
    {
      name: 'caught up: confirmed as of the instant it was asked',
      before: { caughtUp: false, newest: 10, confirmed: 5 },
      caughtUp: true,
      askedAt: 50,
      after: { caughtUp: true, newest: 10, confirmed: 50 },
    },
    {
      name: 'behind: the last confirmation stands (pings published before it were all delivered)',
      before: { caughtUp: true, newest: 10, confirmed: 40 },
      caughtUp: false,
      askedAt: 50,
      after: { caughtUp: false, newest: 10, confirmed: 40 },
    },
    {
      name: 'an answer to an earlier question: the confirmation does not move back',
      before: { caughtUp: true, newest: 10, confirmed: 60 },
      caughtUp: true,
      askedAt: 50,
      after: { caughtUp: true, newest: 10, confirmed: 60 },
    },
  ];
  for (const c of checks) it(c.name, () => assert.deepEqual(afterCheck(c.before, c.caughtUp, c.askedAt), c.after));
});

describe('a partition clock under the deadline heap', () => {
  const setup = () => {
    const base = manualClock(NOW);
    let asked = 0;
    const clock = createPartitionClock(base, { confirm: () => asked++ });
    const due: string[] = [];
    const timers = createDeadlineTimers({ clock, onDue: (ids) => due.push(...ids) });
    const turn = () => new Promise((r) => setImmediate(r));
    return { base, clock, due, timers, turn, asked: () => asked };
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
    clock.setCaughtUp(true, NOW);
    await turn();
    assert.deepEqual(due, ['a', 'b'], 'caught up as of now: the clock decides');
  });

  it('caught up, a deadline the clock reaches waits for the server to confirm, asked after it, that no ping is on its way', async () => {
    const { base, clock, timers, due, turn, asked } = setup();
    clock.setCaughtUp(true, NOW);
    timers.set('a', NOW + 1_000);
    timers.set('b', NOW + 5_000);
    await turn();
    assert.equal(asked(), 0, 'nothing is due yet: nothing to ask');
    base.advance(1_000);
    await turn();
    assert.deepEqual(due, [], 'due by the clock, not yet confirmed');
    assert.ok(asked() >= 1, 'the confirmation is asked for');
    clock.setCaughtUp(true, NOW + 999);
    await turn();
    assert.deepEqual(due, [], 'an answer to a question asked before the deadline does not judge it');
    clock.setCaughtUp(true, NOW + 1_000);
    await turn();
    assert.deepEqual(due, ['a']);
    base.advance(10_000);
    await turn();
    clock.setCaughtUp(false, NOW + 11_000);
    await turn();
    assert.deepEqual(due, ['a'], 'b is past by the clock, but the server says pings wait for this process');
    clock.delivered(NOW + 5_000, 20);
    await turn();
    assert.deepEqual(due, ['a', 'b'], 'a ping stamped past it was delivered: b is judged');
  });

  it('a ping delivered stamped past a deadline fires it with no question asked', async () => {
    const { base, clock, timers, due, turn, asked } = setup();
    clock.setCaughtUp(true, NOW);
    timers.set('a', NOW + 1_000);
    base.advance(2_000);
    await turn();
    const before = asked();
    clock.delivered(NOW + 1_500, 0);
    await turn();
    assert.deepEqual(due, ['a']);
    assert.equal(asked(), before);
  });

  it('is never ahead of the process clock', () => {
    const { clock } = setup();
    clock.delivered(NOW + 60_000, 3);
    assert.equal(clock.now(), NOW);
  });
});
