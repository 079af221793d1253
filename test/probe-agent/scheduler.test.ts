import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createScheduler, nextSlot, phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import { fakeClock, setup, shutdown } from './scheduler-clock.ts';

describe('phaseOf', () => {
  it('is stable and inside the interval', () => {
    assert.equal(phaseOf('monitor-1', 60_000), phaseOf('monitor-1', 60_000));
    for (let i = 0; i < 1000; i++) {
      const p = phaseOf(`m${i}`, 30_000);
      assert.ok(Number.isInteger(p) && p >= 0 && p < 30_000);
    }
  });

  it('spreads similar ids evenly over the interval', () => {
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++)
      buckets[Math.floor(phaseOf(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, 60_000) / 6_000)]!++;
    for (const count of buckets) assert.ok(count > 850 && count < 1150, `bucket of ${count} out of 10000`);
  });

  it('finds the next slot on the phase grid', () => {
    assert.equal(nextSlot(0, 1000, 250), 250);
    assert.equal(nextSlot(250, 1000, 250), 250);
    assert.equal(nextSlot(251, 1000, 250), 1250);
    assert.equal(nextSlot(10_000, 1000, 0), 10_000);
  });
});

describe('createScheduler', () => {
  it('starts each monitor at its phase and spreads many monitors over the interval', async () => {
    const clock = fakeClock(1_000_000);
    const { scheduler, started } = setup(clock);
    for (let i = 0; i < 600; i++) scheduler.add(`m${i}`, 60_000);
    assert.equal(scheduler.size, 600);
    for (let i = 0; i < 600; i++) {
      const due = scheduler.dueOf(`m${i}`)!;
      assert.ok(due >= 1_000_000 && due < 1_060_000);
      assert.equal(due % 60_000, phaseOf(`m${i}`, 60_000));
    }
    await clock.advance(59_999);
    assert.equal(started.length, 600);
    const perSecond = new Map<number, number>();
    for (const s of started) {
      assert.equal(s.startedAt, s.scheduledAt);
      const second = Math.floor(s.startedAt / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    assert.ok(Math.max(...perSecond.values()) <= 40, 'no thundering herd');
    await shutdown(scheduler, clock);
  });

  it('keeps the schedule without drift over many intervals while runs take time', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock, { workMs: 700 });
    scheduler.add('a', 1000);
    const phase = phaseOf('a', 1000);
    await clock.advanceTo(500_000);
    assert.equal(started.length, 500);
    started.forEach((s, k) => {
      assert.equal(s.scheduledAt, phase + k * 1000);
      assert.equal(s.startedAt, s.scheduledAt);
    });
    assert.equal(scheduler.stats().skipped, 0);
    await shutdown(scheduler, clock);
  });

  it('skips a slot instead of overlapping a run that outlasts its interval', async () => {
    const clock = fakeClock(0);
    const { scheduler, started, maxInFlight } = setup(clock, { workMs: 1500 });
    scheduler.add('slow', 1000, 'seed-0');
    await clock.advanceTo(20_000);
    assert.equal(maxInFlight(), 1);
    const phase = phaseOf('seed-0', 1000);
    for (const s of started) assert.equal((s.scheduledAt - phase) % 2000, 0, 'every other slot, still on the grid');
    assert.ok(scheduler.stats().skipped >= 9);
    await shutdown(scheduler, clock);
  });

  it('skips slots missed while the process was late and resumes on the grid', async () => {
    const clock = fakeClock(0);
    const late: number[] = [];
    const { scheduler, started } = setup(clock, { onLateness: (ms) => late.push(ms) });
    scheduler.add('a', 1000, 'x');
    const phase = phaseOf('x', 1000);
    await clock.advanceTo(phase);
    assert.equal(started.length, 1);
    await clock.freeze(5_300);
    assert.equal(started.length, 2, 'one catch-up run, not one per missed slot');
    assert.equal(started[1]!.scheduledAt, phase + 5000);
    assert.equal(scheduler.stats().skipped, 4);
    assert.equal(scheduler.dueOf('a'), phase + 6000);
    assert.deepEqual(late, [0, 300]);
    await clock.advanceTo(phase + 6000);
    assert.equal(started[2]!.scheduledAt, phase + 6000);
    await shutdown(scheduler, clock);
  });

  it('runs at most concurrency jobs at once and starts waiting ones in FIFO order', async () => {
    const clock = fakeClock(0);
    const { scheduler, started, maxInFlight } = setup(clock, { concurrency: 5, workMs: 100 });
    // One seed: every monitor shares the same slot, the worst case for the bound.
    const ids = Array.from({ length: 50 }, (_, i) => `m${i}`);
    for (const id of ids) scheduler.add(id, 10_000, 'same');
    const slot = scheduler.dueOf('m0')!;
    await clock.advanceTo(slot);
    assert.equal(scheduler.stats().inFlight, 5);
    assert.equal(scheduler.stats().queued, 45);
    await clock.advanceTo(slot + 1000);
    assert.equal(maxInFlight(), 5);
    assert.equal(started.length, 50);
    const order = started.map((s) => s.id);
    assert.deepEqual([...order].sort(), [...ids].sort());
    started.forEach((s, i) => {
      assert.equal(s.scheduledAt, slot);
      assert.equal(s.startedAt, slot + Math.floor(i / 5) * 100);
    });
    const firstBatch = new Set(order.slice(0, 5));
    assert.equal(firstBatch.size, 5);
    await shutdown(scheduler, clock);
  });

  it('starts runs that came due while all slots were busy in due order', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock, { concurrency: 1, workMs: 10_000 });
    // 20 runs of 10 s need 200 s, twice the interval: most of them wait in the queue.
    const ids = Array.from({ length: 20 }, (_, i) => `fifo-${i}`);
    for (const id of ids) scheduler.add(id, 100_000);
    const byDue = [...ids].sort((a, b) => scheduler.dueOf(a)! - scheduler.dueOf(b)!);
    await clock.advanceTo(300_000);
    assert.deepEqual(
      started.slice(0, 20).map((s) => s.id),
      byDue,
    );
    for (const s of started) assert.ok(s.startedAt >= s.scheduledAt);
    assert.ok(
      started.some((s) => s.startedAt - s.scheduledAt >= 10_000),
      'some runs waited',
    );
    await shutdown(scheduler, clock);
  });

  it('counts a rejected run and keeps scheduling', async () => {
    const clock = fakeClock(0);
    const errors: string[] = [];
    let calls = 0;
    const scheduler = createScheduler<number>({
      now: clock.now,
      setTimer: clock.setTimer,
      clearTimer: clock.clearTimer,
      concurrency: 2,
      run: async (id) => {
        calls++;
        if (calls === 1) throw new Error(`boom ${id}`);
      },
      onError: (err) => errors.push((err as Error).message),
    });
    scheduler.add('a', 1000);
    await clock.advanceTo(5000);
    assert.deepEqual(errors, ['boom a']);
    assert.equal(scheduler.stats().failed, 1);
    assert.ok(scheduler.stats().runs >= 5);
    await shutdown(scheduler, clock);
  });

  it('stops running a removed monitor, including a run waiting for a free slot', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock, { concurrency: 1, workMs: 50 });
    scheduler.add('a', 1000, 'same');
    scheduler.add('b', 1000, 'same');
    scheduler.add('c', 1000, 'other');
    await clock.advanceTo(scheduler.dueOf('a')!);
    const waiting = started[0]!.id === 'a' ? 'b' : 'a';
    assert.equal(scheduler.remove(waiting), true);
    assert.equal(scheduler.remove(waiting), false);
    await clock.advance(10_000);
    assert.equal(started.filter((s) => s.id === waiting).length, 0);
    assert.ok(started.filter((s) => s.id === 'c').length >= 10);
    assert.equal(scheduler.size, 2);
    assert.equal(scheduler.dueOf(waiting), undefined);
    await shutdown(scheduler, clock);
  });

  it('moves a monitor to its new interval on update', async () => {
    const clock = fakeClock(0);
    const { scheduler, started } = setup(clock);
    scheduler.add('a', 1000);
    await clock.advanceTo(3000);
    const before = started.length;
    assert.equal(scheduler.update('a', 5000), true);
    assert.equal(scheduler.update('nope', 5000), false);
    const due = scheduler.dueOf('a')!;
    assert.equal(due % 5000, phaseOf('a', 5000));
    await clock.advanceTo(40_000);
    const after = started.slice(before).map((s) => s.scheduledAt);
    assert.equal(after[0], due);
    for (let i = 1; i < after.length; i++) assert.equal(after[i]! - after[i - 1]!, 5000);
    // Re-adding with the same interval must not reset the schedule.
    const next = scheduler.dueOf('a');
    scheduler.add('a', 5000);
    assert.equal(scheduler.dueOf('a'), next);
    await shutdown(scheduler, clock);
  });

  it('keeps one timer armed, for the earliest monitor', async () => {
    const clock = fakeClock(0);
    const { scheduler } = setup(clock, { workMs: 30 });
    for (let i = 0; i < 2000; i++) scheduler.add(`m${i}`, 5_000 + (i % 7) * 1000);
    assert.equal(clock.armed, 1);
    let earliest = Infinity;
    for (let i = 0; i < 2000; i++) earliest = Math.min(earliest, scheduler.dueOf(`m${i}`)!);
    for (let step = 0; step < 100; step++) {
      await clock.advance(997);
      assert.equal(clock.armed, 1);
      if (step % 10 === 0) scheduler.remove(`m${step}`);
    }
    assert.equal(clock.maxArmed, 1);
    assert.ok(scheduler.stats().runs > 2000);
    await shutdown(scheduler, clock);
    assert.equal(clock.armed, 0);
    const runs = scheduler.stats().runs;
    await clock.advance(60_000);
    assert.equal(scheduler.stats().runs, runs, 'nothing runs after stop');
  });

  it('disarms when the last monitor is removed and re-arms on add', async () => {
    const clock = fakeClock(0);
    const { scheduler } = setup(clock);
    scheduler.add('a', 1000);
    assert.equal(clock.armed, 1);
    scheduler.remove('a');
    assert.equal(clock.armed, 0);
    scheduler.add('b', 1000);
    assert.equal(clock.armed, 1);
    await shutdown(scheduler, clock);
  });

  it('waits for runs in flight on stop', async () => {
    const clock = fakeClock(0);
    const { scheduler } = setup(clock, { workMs: 500 });
    scheduler.add('a', 1000, 'x');
    await clock.advanceTo(scheduler.dueOf('a')!);
    assert.equal(scheduler.stats().inFlight, 1);
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await clock.advance(499);
    assert.equal(stopped, false);
    await clock.advance(1);
    await stopping;
    assert.equal(stopped, true);
  });
});
