import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { nanos, type Subscription } from '@nats-io/transport-node';
import { z } from 'zod';
import { startConsumer, type ConsumerSpec, type RunningConsumer } from '../../control-plane/src/platform/nats/consumer.ts';
import { consumerLeaderElected } from '../../control-plane/src/platform/nats/follow-leader.ts';
import { captureLog } from '../harness/log.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { eventually } from '../harness/streams.ts';

const Item = z.object({ n: z.number().int() });
type Item = z.infer<typeof Item>;

/** A value the store refuses (SQLSTATE class 22, as Postgres raises it). */
const dataError = () => Object.assign(new Error('invalid datetime'), { code: '22007' });
const isDataError = (err: unknown) => String((err as { code?: unknown }).code ?? '').startsWith('22');

/**
 * The kit every role consumes through (platform/nats/consumer.ts), against a real nats-server:
 * one stream of this file, a subject and a durable per test.
 */
describe('the consumer kit', () => {
  let nats: TestNats;
  let stream: string;
  let serial = 0;
  const running: RunningConsumer[] = [];
  const watches: Subscription[] = [];
  let js: JetStreamClient;

  before(async () => {
    nats = await createTestNats();
    stream = `${nats.namespace}_KIT`;
    const jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({ name: stream, subjects: [`${nats.namespace}.kit.>`] });
    js = jetstream(nats.nc);
  });
  after(async () => {
    for (const c of running) await c.stop();
    for (const w of watches) w.unsubscribe();
    await nats.close();
  });

  /** A subject and durable of their own, and a way to start the kit on them. */
  const fresh = () => {
    const k = ++serial;
    const subject = `${nats.namespace}.kit.${k}`;
    const durable = `kit-${k}`;
    const capture = captureLog();
    const start = async (rest: Pick<ConsumerSpec<Item>, 'pull' | 'handler'> & Partial<ConsumerSpec<Item>>) => {
      const c = await startConsumer<Item>({
        nc: nats.nc,
        log: capture.log,
        stream,
        config: { durable_name: durable, filter_subject: subject, ack_wait: nanos(30_000) },
        schema: Item,
        noun: 'item',
        ...rest,
      });
      running.push(c);
      return c;
    };
    /** Publishes each item (a string as is); the stream sequence of each. */
    const publish = async (...items: unknown[]) => {
      const seqs: number[] = [];
      for (const i of items) seqs.push((await js.publish(subject, typeof i === 'string' ? i : JSON.stringify(i))).seq);
      return seqs;
    };
    // How the kit answered each delivery, as it reaches the server: +ACK, -NAK (with its delay), +TERM.
    const answered: { seq: number; answer: string }[] = [];
    const acks = nats.nc.subscribe(`$JS.ACK.${stream}.${durable}.>`, {
      callback: (_err, m) => void answered.push({ seq: Number(m.subject.split('.')[5]), answer: m.string() }),
    });
    watches.push(acks);
    const info = async () => (await jetstreamManager(nats.nc)).consumers.info(stream, durable);
    /** Every message of the subject answered: none waiting, none delivered and unanswered. */
    const settled = async () => {
      const i = await info();
      return i.num_pending === 0 && i.num_ack_pending === 0;
    };
    return { subject, durable, start, publish, info, settled, answered, logText: capture.text };
  };

  it('terminates, logs and counts what does not parse or is not accepted, and hands over the rest in order', async () => {
    const t = fresh();
    const seqs = await t.publish({ n: 1 }, 'not json', { n: 'two' }, { n: 1_000 }, { n: 3 });
    const handled: number[] = [];
    const c = await t.start({
      accept: (v) => v.n < 100,
      pull: { kind: 'rounds', maxMessages: 10, expiresMs: 1_000 },
      handler: {
        kind: 'messages',
        handle: (msg, v) => {
          handled.push(v.n);
          msg.ack();
        },
      },
    });
    await eventually(async () => handled.length === 2 && (await t.settled()), 'valid items handled, the others terminated');
    assert.deepEqual(handled, [1, 3]);
    assert.equal(c.stats().invalid, 3);
    assert.equal(c.stats().handled, 2);
    assert.equal(t.logText().split('invalid item terminated').length - 1, 3);
    // Terminated, not handed back: nothing comes again.
    await nats.nc.flush();
    assert.deepEqual(
      seqs.map((s) => t.answered.find((a) => a.seq === s)?.answer),
      ['+ACK', '+TERM', '+TERM', '+TERM', '+ACK'],
    );
    assert.equal((await t.info()).num_redelivered, 0);
    await c.stop();
  });

  it('leaves a delivery the role already has unparsed, and lets the role terminate an invalid one its own way', async () => {
    const t = fresh();
    await t.publish({ n: 1 }, { n: 2 }, 'not json');
    const handled: number[] = [];
    const seen: number[] = [];
    const terminated: number[] = [];
    const c = await t.start({
      pull: { kind: 'rounds', maxMessages: 10, expiresMs: 1_000 },
      handler: {
        kind: 'messages',
        delivered: (msg) => {
          seen.push(msg.seq);
          if (msg.string() !== JSON.stringify({ n: 2 })) return true;
          msg.ack();
          return false;
        },
        handle: (msg, v) => {
          handled.push(v.n);
          msg.ack();
        },
        terminate: (msg) => {
          terminated.push(msg.seq);
          msg.term();
        },
      },
    });
    await eventually(async () => seen.length === 3 && (await t.settled()), 'every delivery seen');
    assert.deepEqual(handled, [1]);
    assert.equal(terminated.length, 1);
    assert.equal(c.stats().invalid, 1);
    await c.stop();
  });

  it('acknowledges a batch once committed, and hands back a failed one to come again after the delay', async () => {
    const t = fresh();
    await t.publish({ n: 1 }, { n: 2 }, { n: 3 });
    const attempts: number[][] = [];
    const after: number[] = [];
    const c = await t.start({
      pull: { kind: 'continuous', maxMessages: 100 },
      handler: {
        kind: 'batches',
        batchSize: 100,
        lingerMs: 50,
        concurrency: 1,
        retryDelayMs: 100,
        async commit(values) {
          attempts.push(values.map((v) => v.n));
          if (attempts.length === 1) throw new Error('connection lost');
          return async () => void after.push(...values.map((v) => v.n));
        },
      },
    });
    // Well within the ack wait (30 s): the failed batch came back after its nak's delay.
    await eventually(async () => c.stats().handled === 3 && (await t.settled()), 'the batch committed on its second delivery', 10_000);
    assert.deepEqual(attempts[0], [1, 2, 3]);
    assert.deepEqual(
      t.answered.slice(0, 3).map((a) => a.answer),
      Array(3).fill(`-NAK ${JSON.stringify({ delay: nanos(100) })}`),
      'each message of the failed batch handed back with the delay',
    );
    assert.deepEqual(attempts.slice(1).flat().sort(), [1, 2, 3]);
    assert.deepEqual(after.sort(), [1, 2, 3], 'what follows the acknowledgement ran');
    assert.deepEqual({ failedBatches: c.stats().failedBatches, invalid: c.stats().invalid }, { failedBatches: 1, invalid: 0 });
    await c.stop();
  });

  it('splits a batch the handler refuses down to the message that causes it, terminates that one and commits the rest', async () => {
    const t = fresh();
    const seqs = await t.publish(...[1, 2, 3, 13, 5, 6, 7].map((n) => ({ n })));
    const committed: number[] = [];
    const c = await t.start({
      pull: { kind: 'continuous', maxMessages: 100 },
      handler: {
        kind: 'batches',
        batchSize: 100,
        lingerMs: 100,
        concurrency: 2,
        refused: isDataError,
        async commit(values) {
          if (values.some((v) => v.n === 13)) throw dataError();
          committed.push(...values.map((v) => v.n));
        },
      },
    });
    await eventually(async () => committed.length === 6 && (await t.settled()), 'the rest committed, the poison terminated');
    assert.deepEqual(
      committed.sort((a, b) => a - b),
      [1, 2, 3, 5, 6, 7],
    );
    assert.equal(c.stats().invalid, 1);
    assert.equal(c.stats().failedBatches, 0);
    assert.match(t.logText(), /item refused by its handler terminated/);
    assert.deepEqual(
      t.answered.filter((a) => a.answer === '+TERM').map((a) => a.seq),
      [seqs[3]],
    );
    await c.stop();
  });

  it('on stop, lets the batch being handled commit and hands back what is queued before it returns', async () => {
    const t = fresh();
    const seqs = await t.publish(...[1, 2, 3, 4, 5, 6].map((n) => ({ n })));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batches: number[][] = [];
    const c = await t.start({
      pull: { kind: 'continuous', maxMessages: 100 },
      handler: {
        kind: 'batches',
        batchSize: 2,
        lingerMs: 10,
        concurrency: 1,
        async commit(values) {
          batches.push(values.map((v) => v.n));
          await gate;
        },
      },
    });
    await eventually(async () => batches.length === 1 && (await t.info()).num_ack_pending === 6, 'one batch committing, the rest queued');
    const stopped = c.stop();
    release();
    await stopped;
    await nats.nc.flush();
    assert.deepEqual(batches, [[1, 2]], 'no batch taken after stop');
    assert.equal(c.stats().handled, 2);
    // Handed back at once (a nak without delay), not left to the 30 s ack wait.
    const answers = new Map(t.answered.map((a) => [a.seq, a.answer]));
    assert.deepEqual(
      seqs.map((s) => answers.get(s)),
      ['+ACK', '+ACK', '-NAK', '-NAK', '-NAK', '-NAK'],
    );
  });

  it('reports each round: how many it delivered and how many waited behind the last one; stop lets the round end', async () => {
    const t = fresh();
    await t.publish(...[1, 2, 3, 4, 5].map((n) => ({ n })));
    const rounds: [number, number | undefined][] = [];
    const handled: number[] = [];
    const c = await t.start({
      pull: {
        kind: 'rounds',
        maxMessages: 2,
        expiresMs: 1_000,
        onPulled: (delivered, pendingAfter) => rounds.push([delivered, pendingAfter]),
      },
      handler: {
        kind: 'messages',
        handle: (msg, v) => {
          handled.push(v.n);
          msg.ack();
        },
      },
    });
    await eventually(async () => rounds.length >= 4, 'an empty round after the stream was read');
    assert.deepEqual(rounds.slice(0, 4), [
      [2, 3],
      [2, 1],
      [1, 0],
      [0, undefined],
    ]);
    // Published as stop begins: the round in progress still delivers it, and stop waits for it.
    await t.publish({ n: 6 });
    await c.stop();
    assert.deepEqual(handled, [1, 2, 3, 4, 5, 6]);
  });

  for (const kind of ['rounds', 'continuous'] as const) {
    it(`pulls again at once when a new consumer leader is announced (${kind})`, async () => {
      const t = fresh();
      // Every pull request the kit sends for this durable, as the server receives it.
      let pulls = 0;
      const watch = nats.nc.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${t.durable}`, { callback: () => void pulls++ });
      const handled: number[] = [];
      // Pulls that last 30 s: without the announcement, nothing would pull again for that long.
      const c = await t.start({
        // (Spelled twice so that each is one member of the union.)
        pull: kind === 'rounds' ? { kind, maxMessages: 10, expiresMs: 30_000 } : { kind, maxMessages: 10, expiresMs: 30_000 },
        handler: {
          kind: 'messages',
          handle: (msg, v) => {
            handled.push(v.n);
            msg.ack();
          },
        },
      });
      await eventually(async () => pulls === 1, 'the first pull');
      await t.publish({ n: 1 });
      await eventually(async () => handled.length === 1, 'an item through the first pull');
      const before = pulls;
      nats.nc.publish(
        consumerLeaderElected(stream, t.durable),
        JSON.stringify({ type: 'io.nats.jetstream.advisory.v1.consumer_leader_elected' }),
      );
      await eventually(async () => pulls > before, 'a new pull after the announcement', 3_000);
      await t.publish({ n: 2 });
      await eventually(async () => handled.length === 2, 'an item through the new pull', 3_000);
      assert.deepEqual(handled, [1, 2]);
      assert.match(t.logText(), /consumer has a new leader: pulling from it/);
      watch.unsubscribe();
      // A round of 30 s in progress: stop() ends it only at its expiry, so stop it with the advisory.
      const stopping = c.stop();
      if (kind === 'rounds') nats.nc.publish(consumerLeaderElected(stream, t.durable), '{}');
      await stopping;
    });
  }
});
