import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { offGridTime, phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import { fakeClock, setup, shutdown } from './scheduler-clock.ts';

describe('offGridTime', () => {
  const cases: { name: string; at: number; interval: number; phase: number; want: number }[] = [
    { name: 'between two slots: the time itself', at: 10_250, interval: 1000, phase: 300, want: 10_250 },
    { name: 'on a slot: 1 ms later', at: 10_300, interval: 1000, phase: 300, want: 10_301 },
    { name: 'on the phase itself', at: 300, interval: 1000, phase: 300, want: 301 },
    { name: 'just before a slot', at: 10_299, interval: 1000, phase: 300, want: 10_299 },
    { name: 'before the phase (negative offset)', at: 100, interval: 1000, phase: 300, want: 100 },
    { name: 'a whole interval before the phase, on the grid', at: -700, interval: 1000, phase: 300, want: -699 },
  ];
  for (const c of cases) it(c.name, () => assert.equal(offGridTime(c.at, c.interval, c.phase), c.want));
});

describe('createScheduler runOnce', () => {
  it('runs at once for the time given, off the grid, and leaves the grid as it was', async () => {
    const clock = fakeClock(1_000_000);
    const late: number[] = [];
    const { scheduler, started } = setup(clock, { onLateness: (ms) => late.push(ms) });
    scheduler.add('a', 60_000, 'seed');
    const due = scheduler.dueOf('a')!;
    const at = clock.now() - 150;
    assert.notEqual((at - phaseOf('seed', 60_000)) % 60_000, 0);
    assert.equal(scheduler.runOnce('a', at), true);
    await clock.advance(0);
    assert.deepEqual(started, [{ id: 'a', scheduledAt: at, startedAt: 1_000_000, offGrid: true }]);
    assert.equal(scheduler.dueOf('a'), due, 'the next slot is unchanged');
    assert.deepEqual(late, [], 'an off-grid run is no late slot');

    await clock.advanceTo(due + 60_000);
    assert.deepEqual(
      started.slice(1).map((s) => [s.scheduledAt, s.offGrid]),
      [
        [due, false],
        [due + 60_000, false],
      ],
    );
    assert.equal(scheduler.stats().offGrid, 1);
    assert.equal(scheduler.stats().runs, 3);
    await shutdown(scheduler, clock);
  });

  it('moves a time that falls on a slot 1 ms later, so it never shares the slot', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock);
    scheduler.add('a', 10_000, 'seed');
    const onSlot = scheduler.dueOf('a')! - 10_000;
    scheduler.runOnce('a', onSlot);
    await clock.advance(0);
    assert.equal(started[0]!.scheduledAt, onSlot + 1);
    await shutdown(scheduler, clock);
  });

  it('waits for a run in flight, and a slot coming due during its own run is skipped', async () => {
    const clock = fakeClock(0);
    const { scheduler, started, maxInFlight } = setup(clock, { workMs: 700 });
    scheduler.add('a', 1000, 'seed');
    const slot = scheduler.dueOf('a')!;
    await clock.advanceTo(slot + 100);
    assert.equal(scheduler.stats().inFlight, 1);
    scheduler.runOnce('a', slot + 50);
    await clock.advance(0);
    assert.equal(started.length, 1, 'not while the slot is checked');
    await clock.advanceTo(slot + 700);
    assert.deepEqual(started[1], { id: 'a', scheduledAt: slot + 50, startedAt: slot + 700, offGrid: true });
    // Its run lasts until slot + 1400: the slot at slot + 1000 finds the monitor busy.
    await clock.advanceTo(slot + 2000);
    assert.deepEqual(
      started.slice(2).map((s) => s.scheduledAt),
      [slot + 2000],
    );
    assert.equal(scheduler.stats().skipped, 1);
    assert.equal(maxInFlight(), 1);
    await shutdown(scheduler, clock);
  });

  it('queues behind other runs when every run is busy', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock, { concurrency: 1, workMs: 100 });
    scheduler.add('busy', 10_000, 'same');
    await clock.advanceTo(scheduler.dueOf('busy')!);
    scheduler.add('new', 10_000, 'other');
    assert.ok(scheduler.dueOf('new')! > clock.now());
    const t = clock.now();
    scheduler.runOnce('new', t);
    await clock.advance(0);
    assert.deepEqual(
      started.map((s) => s.id),
      ['busy'],
    );
    await clock.advance(100);
    assert.deepEqual(started[1], { id: 'new', scheduledAt: t, startedAt: t + 100, offGrid: true });
    await shutdown(scheduler, clock);
  });

  it('does nothing for a monitor not scheduled, removed before its turn, or after stop', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock, { concurrency: 1, workMs: 100 });
    assert.equal(scheduler.runOnce('nope', 5), false);
    scheduler.add('busy', 10_000, 'same');
    await clock.advanceTo(scheduler.dueOf('busy')!);
    scheduler.add('gone', 10_000, 'other');
    assert.ok(scheduler.dueOf('gone')! > clock.now() + 500, 'no slot of its own meanwhile');
    scheduler.runOnce('gone', clock.now());
    scheduler.remove('gone');
    await clock.advance(500);
    assert.deepEqual(
      started.map((s) => s.id),
      ['busy'],
    );
    const stopping = scheduler.stop();
    assert.equal(scheduler.runOnce('busy', clock.now()), false);
    await clock.advance(1000);
    await stopping;
    assert.equal(started.length, 1);
  });
});
