import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../shared/src/logger.ts';
import { createResultPublisher, type PublishFn } from '../../probe-agent/src/results/publisher.ts';

const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

type Call = { msgId: string; resolve: (duplicate?: boolean) => void; reject: (err: Error) => void };

/** A publish function whose acks the test hands out. */
function manualServer() {
  const calls: Call[] = [];
  const publish: PublishFn = (_subject, _payload, msgId) =>
    new Promise((resolve, reject) => {
      calls.push({ msgId, resolve: (duplicate = false) => resolve({ duplicate }), reject });
    });
  return { calls, publish };
}

/** A publish function that fails while `down` is set and acks at once otherwise. */
function flakyServer() {
  const stored: string[] = [];
  const attempts: string[] = [];
  const state = { down: false };
  const publish: PublishFn = async (_subject, _payload, msgId) => {
    attempts.push(msgId);
    await Promise.resolve();
    if (state.down) throw new Error('no responders');
    const duplicate = stored.includes(msgId);
    if (!duplicate) stored.push(msgId);
    return { duplicate };
  };
  return { stored, attempts, state, publish };
}

const msg = (i: number) => ({ subject: 'ns.results.r.m', payload: `{"i":${i}}`, msgId: `m:r:${i}` });
const settle = () => new Promise((resolve) => setImmediate(resolve));

async function eventually(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('result publisher', () => {
  it('keeps at most a window of publishes awaiting their ack, sent in push order', async () => {
    const server = manualServer();
    const p = createResultPublisher({ publish: server.publish, log, window: 3 });
    for (let i = 0; i < 5; i++) p.push(msg(i));
    assert.deepEqual(
      server.calls.map((c) => c.msgId),
      ['m:r:0', 'm:r:1', 'm:r:2'],
    );
    assert.equal(p.stats().inFlight, 3);
    server.calls[1]!.resolve();
    await settle();
    assert.deepEqual(
      server.calls.map((c) => c.msgId),
      ['m:r:0', 'm:r:1', 'm:r:2', 'm:r:3'],
    );
    for (const c of server.calls) c.resolve();
    await settle();
    server.calls[4]!.resolve();
    assert.equal(await p.flush(1_000), true);
    assert.deepEqual(p.stats(), { published: 5, duplicates: 0, buffered: 0, inFlight: 0, dropped: 0, failures: 0 });
    p.close();
  });

  it('buffers while publishing fails and then publishes everything once, in order, with the same ids', async () => {
    const server = flakyServer();
    const p = createResultPublisher({ publish: server.publish, log, window: 4, retryMinMs: 2, retryMaxMs: 10 });
    p.push(msg(0));
    await eventually(() => p.stats().published === 1);
    server.state.down = true;
    for (let i = 1; i <= 20; i++) p.push(msg(i));
    await eventually(() => p.stats().failures >= 8);
    assert.equal(p.stats().buffered, 20);
    server.state.down = false;
    assert.equal(await p.flush(2_000), true);
    assert.deepEqual(
      server.stored,
      Array.from({ length: 21 }, (_, i) => `m:r:${i}`),
    );
    assert.equal(p.stats().published, 21);
    p.close();
  });

  it('retries the oldest result alone while publishing fails', async () => {
    const server = flakyServer();
    const p = createResultPublisher({ publish: server.publish, log, window: 8, retryMinMs: 1, retryMaxMs: 2 });
    server.state.down = true;
    for (let i = 0; i < 8; i++) p.push(msg(i));
    const firstRound = server.attempts.length;
    await eventually(() => server.attempts.length >= firstRound + 5);
    assert.deepEqual(new Set(server.attempts.slice(firstRound)), new Set(['m:r:0']));
    p.close();
  });

  it('holds results from a lost connection on until one publish goes through, then sends them in order', async () => {
    const server = flakyServer();
    const p = createResultPublisher({ publish: server.publish, log, retryMinMs: 1, retryMaxMs: 2 });
    server.state.down = true;
    p.pause();
    for (let i = 0; i < 5; i++) p.push(msg(i));
    await eventually(() => p.stats().failures >= 3);
    assert.equal(p.stats().buffered, 5);
    server.state.down = false;
    p.resume();
    assert.equal(await p.flush(1_000), true);
    assert.deepEqual(server.stored, ['m:r:0', 'm:r:1', 'm:r:2', 'm:r:3', 'm:r:4']);
    p.close();
  });

  it('retries at once, without waiting out the back-off, when told the stream may answer again', async () => {
    const server = flakyServer();
    // A back-off of a minute: only retryNow() can get the results through while the test runs.
    const p = createResultPublisher({ publish: server.publish, log, retryMinMs: 60_000, retryMaxMs: 60_000 });
    server.state.down = true;
    for (let i = 0; i < 3; i++) p.push(msg(i));
    await eventually(() => p.stats().failures >= 1 && p.stats().inFlight === 0);
    const attempts = server.attempts.length;
    server.state.down = false;
    p.retryNow();
    assert.equal(await p.flush(1_000), true);
    assert.deepEqual(server.stored, ['m:r:0', 'm:r:1', 'm:r:2']);
    assert.equal(server.attempts.length, attempts + 3, 'one retry, then the rest in order');
    p.retryNow();
    assert.equal(server.attempts.length, attempts + 3, 'nothing to retry once results flow');
    p.close();
  });

  it('does not wait for publishes that will time out once told the stream may answer again', async () => {
    const server = manualServer();
    const p = createResultPublisher({ publish: server.publish, log, window: 4, retryMinMs: 60_000, retryMaxMs: 60_000 });
    for (let i = 0; i < 3; i++) p.push(msg(i));
    server.calls[0]!.reject(new Error('no responders'));
    await settle();
    // 1 and 2 went out before anything could store them: their answers are timeouts to come.
    p.retryNow();
    await eventually(() => server.calls.length === 4);
    assert.equal(server.calls[3]!.msgId, 'm:r:0', 'the oldest result again, at once');
    server.calls[3]!.resolve();
    await settle();
    assert.deepEqual(
      server.calls.slice(4).map((c) => c.msgId),
      ['m:r:1', 'm:r:2'],
      'then the rest, in order',
    );
    // A late ack of an abandoned attempt still means stored; its late failure changes nothing.
    server.calls[1]!.resolve();
    server.calls[2]!.reject(new Error('timeout'));
    server.calls[5]!.resolve(true);
    await settle();
    assert.equal(p.stats().buffered, 0);
    assert.equal(p.stats().inFlight, 1, 'the second attempt of 1 still waits for its ack');
    server.calls[4]!.resolve(true);
    assert.equal(await p.flush(1_000), true);
    assert.deepEqual(p.stats(), { published: 3, duplicates: 1, buffered: 0, inFlight: 0, dropped: 0, failures: 2 });
    p.close();
  });

  it('sends nothing while paused with an empty buffer, and flows again once resumed', async () => {
    const server = manualServer();
    const p = createResultPublisher({ publish: server.publish, log, retryMinMs: 1, retryMaxMs: 2 });
    p.pause();
    await new Promise((resolve) => setTimeout(resolve, 10));
    p.push(msg(0));
    assert.equal(server.calls.length, 0, 'the buffered result waits for the retry, not the window');
    await eventually(() => server.calls.length === 1);
    server.calls[0]!.resolve();
    await settle();
    p.push(msg(1));
    assert.equal(server.calls.length, 2, 'a successful retry reopens the window');
    server.calls[1]!.resolve();
    assert.equal(await p.flush(1_000), true);
    p.close();
  });

  it('counts an ack of an already stored id as a duplicate, not a loss', async () => {
    const server = manualServer();
    const p = createResultPublisher({ publish: server.publish, log });
    p.push(msg(0));
    server.calls[0]!.resolve(true);
    assert.equal(await p.flush(1_000), true);
    assert.equal(p.stats().published, 1);
    assert.equal(p.stats().duplicates, 1);
    p.close();
  });

  it('drops the oldest unsent results beyond its capacity, and counts them', async () => {
    const server = flakyServer();
    const p = createResultPublisher({ publish: server.publish, log, window: 2, capacity: 5, retryMinMs: 2, retryMaxMs: 5 });
    server.state.down = true;
    for (let i = 0; i < 12; i++) p.push(msg(i));
    assert.equal(p.stats().dropped, 7);
    assert.equal(p.stats().buffered, 5);
    server.state.down = false;
    assert.equal(await p.flush(2_000), true);
    assert.equal(p.stats().published, 5);
    assert.deepEqual(server.stored.slice(-3), ['m:r:9', 'm:r:10', 'm:r:11']);
    p.close();
  });

  it('reports a flush that runs out of time', async () => {
    const server = manualServer();
    const p = createResultPublisher({ publish: server.publish, log });
    p.push(msg(0));
    assert.equal(await p.flush(20), false);
    assert.equal(p.stats().buffered, 1);
    p.close();
  });
});
