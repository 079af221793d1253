import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createResultBuffer, DONE, IN_FLIGHT, QUEUED } from '../../probe-agent/src/results/buffer.ts';
import { createFlushWaiters } from '../../probe-agent/src/results/flush-waiters.ts';
import { createRetryTimer } from '../../probe-agent/src/results/retry-timer.ts';

const msg = (i: number) => ({ subject: 's', payload: `${i}`, msgId: `m${i}` });

describe('result buffer', () => {
  it('hands results out once each, in push order, and again from the oldest held after a rewind', () => {
    const b = createResultBuffer(10);
    for (let i = 0; i < 3; i++) b.push(msg(i));
    const first = b.nextToSend()!;
    first.state = IN_FLIGHT;
    assert.equal(b.nextToSend()!.msgId, 'm1');
    assert.equal(b.nextToSend()!.msgId, 'm2');
    assert.equal(b.nextToSend(), undefined);
    b.rewind();
    assert.equal(b.nextToSend()!.msgId, 'm1', 'the one in flight is skipped');
  });

  it('drops the oldest unsent result beyond its capacity, never one in flight', () => {
    const b = createResultBuffer(2);
    b.push(msg(0));
    b.push(msg(1));
    b.nextToSend()!.state = IN_FLIGHT;
    assert.equal(b.push(msg(2)), true);
    assert.deepEqual([b.buffered, b.dropped], [2, 1]);
    assert.equal(b.oldestQueued()!.msgId, 'm2');
    b.nextToSend()!.state = IN_FLIGHT;
    assert.equal(b.push(msg(3)), true);
    assert.deepEqual([b.buffered, b.dropped], [2, 2]);
  });

  it('drops the result just pushed when everything older is in flight', () => {
    const b = createResultBuffer(1);
    b.push(msg(0));
    b.nextToSend()!.state = IN_FLIGHT;
    assert.equal(b.push(msg(1)), true);
    assert.equal(b.nextToSend(), undefined);
    assert.deepEqual([b.buffered, b.dropped], [1, 1]);
    const none = createResultBuffer(0);
    assert.equal(none.push(msg(0)), true);
    assert.deepEqual([none.buffered, none.dropped], [0, 1]);
  });

  it('counts a result stored once, however many acks arrive for it', () => {
    const b = createResultBuffer(10);
    b.push(msg(0));
    const item = b.nextToSend()!;
    assert.equal(b.complete(item), true);
    assert.equal(b.complete(item), false);
    assert.equal(item.state, DONE);
    assert.equal(b.buffered, 0);
  });

  it('sends everything in flight again, outdating the answers still pending', () => {
    const b = createResultBuffer(10);
    for (let i = 0; i < 3; i++) b.push(msg(i));
    const sent = [b.nextToSend()!, b.nextToSend()!];
    for (const item of sent) {
      item.state = IN_FLIGHT;
      item.sends = 1;
    }
    assert.equal(b.requeueInFlight(), 2);
    assert.deepEqual(
      sent.map((i) => [i.state, i.sends]),
      [
        [QUEUED, 2],
        [QUEUED, 2],
      ],
    );
  });

  it('keeps push order across the bulk cut of acknowledged results', () => {
    const b = createResultBuffer(10_000);
    for (let i = 0; i < 3_000; i++) b.push(msg(i));
    for (let i = 0; i < 2_000; i++) b.complete(b.nextToSend()!);
    assert.equal(b.buffered, 1_000);
    assert.equal(b.nextToSend()!.msgId, 'm2000');
    b.rewind();
    assert.equal(b.oldestQueued()!.msgId, 'm2000');
  });
});

describe('retry timer', () => {
  it('doubles the back-off up to its ceiling and starts over after a reset or a retry at once', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let fired = 0;
    const retry = createRetryTimer({ minMs: 100, maxMs: 300, fire: () => fired++ });
    const firesAfter = (ms: number) => {
      const before = fired;
      retry.later();
      t.mock.timers.tick(ms - 1);
      assert.equal(fired, before, `not before ${ms} ms`);
      t.mock.timers.tick(1);
      assert.equal(fired, before + 1, `at ${ms} ms`);
    };
    firesAfter(100);
    firesAfter(200);
    firesAfter(300);
    firesAfter(300);
    retry.reset();
    firesAfter(100);
    retry.later();
    retry.later();
    retry.now();
    t.mock.timers.tick(0);
    assert.equal(fired, 6, 'one retry at once replaces the armed one');
    t.mock.timers.tick(1_000);
    assert.equal(fired, 6);
    firesAfter(100);
    retry.later();
    retry.cancel();
    t.mock.timers.tick(1_000);
    assert.equal(fired, 7);
  });
});

describe('flush waiters', () => {
  it('answers every waiter at once, and false to one whose time ran out', async (t) => {
    const w = createFlushWaiters();
    const a = w.wait(60_000);
    const b = w.wait(60_000);
    w.settle(true);
    assert.deepEqual(await Promise.all([a, b]), [true, true]);
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const late = w.wait(50);
    t.mock.timers.tick(50);
    assert.equal(await late, false);
    const closing = w.wait(60_000);
    w.settle(false);
    assert.equal(await closing, false);
  });
});
