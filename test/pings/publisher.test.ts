import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { createAckPublisher } from '../../shared/src/ack-publisher.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { readStream } from '../harness/streams.ts';

describe('the ping publisher', () => {
  let nats: TestNats;
  const stream = () => `${nats.namespace}_PUBLISHER`;
  const subject = (n: number | string) => `${nats.namespace}.publisher.${n}`;
  before(async () => {
    nats = await createTestNats();
    const jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({ name: stream(), subjects: [`${nats.namespace}.publisher.>`] });
  });
  after(() => nats.close());

  it('answers each caller once its own message is stored, with many in flight', async () => {
    const publisher = createAckPublisher(nats.nc);
    const ids = Array.from({ length: 500 }, () => randomUUID());
    const answers = await Promise.all(ids.map((id, i) => publisher.publish(subject(`many.${i % 7}`), JSON.stringify({ id }), id)));
    assert.ok(answers.every((a) => a === true));
    const stored = await readStream(nats.nc, stream(), subject('many.*'));
    assert.deepEqual(stored.map((m) => m.msgId).sort(), [...ids].sort());
    assert.ok(
      stored.every((m) => m.data.id === m.msgId),
      'each message under its own msg id',
    );
    await publisher.close();
  });

  it('stores a message once when it is published again under the same id', async () => {
    const publisher = createAckPublisher(nats.nc);
    const id = randomUUID();
    assert.deepEqual(
      await Promise.all([publisher.publish(subject('again'), '"first"', id), publisher.publish(subject('again'), '"second"', id)]),
      [true, true],
    );
    assert.equal(await publisher.publish(subject('again'), '"third"', id), true);
    assert.deepEqual(
      (await readStream(nats.nc, stream(), subject('again'))).map((m) => m.data),
      ['first'],
    );
    await publisher.close();
  });

  it('keeps trying while no stream takes the subject, and answers once one does', async () => {
    const publisher = createAckPublisher(nats.nc);
    const late = `${nats.namespace}_LATE`;
    const id = randomUUID();
    const answer = publisher.publish(`${nats.namespace}.late.1`, '"waited"', id);
    // The first attempt has reached the server (and found no stream) once a round trip made after it returns.
    await new Promise((r) => setImmediate(r));
    await nats.nc.flush();
    await (await jetstreamManager(nats.nc)).streams.add({ name: late, subjects: [`${nats.namespace}.late.>`] });
    assert.equal(await answer, true);
    assert.deepEqual(
      (await readStream(nats.nc, late)).map((m) => [m.data, m.msgId]),
      [['waited', id]],
    );
    await publisher.close();
  });

  it('answers false when no stream takes the message within its budget', async () => {
    const publisher = createAckPublisher(nats.nc, { budgetMs: 300 });
    assert.equal(await publisher.publish(`${nats.namespace}.nowhere.1`, '"lost"', randomUUID()), false);
    assert.equal(publisher.pending(), 0);
    await publisher.close();
  });

  it('answers every message it took before closing, and takes none after', async () => {
    const publisher = createAckPublisher(nats.nc);
    const id = randomUUID();
    const taken = publisher.publish(subject('closing'), '"taken"', id);
    const closed = publisher.close();
    assert.equal(await publisher.publish(subject('closing'), '"refused"', randomUUID()), false);
    assert.equal(await taken, true);
    await closed;
    assert.equal(publisher.pending(), 0);
    assert.deepEqual(
      (await readStream(nats.nc, stream(), subject('closing'))).map((m) => m.msgId),
      [id],
    );
  });
});
