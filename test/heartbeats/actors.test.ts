import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActors, type Step } from '../../control-plane/src/heartbeats/deadline/actors.ts';

/** Actors whose steps wait until the test releases them. */
function setup(batchSize = 10, concurrency = 1, pingsPerStep = 100, pingsPerBatch = 1_000) {
  const batches: Step<string>[][] = [];
  const release: (() => void)[] = [];
  const actors = createActors<string>({
    batchSize,
    pingsPerStep,
    pingsPerBatch,
    concurrency,
    onError: (err) => assert.fail(String(err)),
    run: (steps) => {
      batches.push(steps);
      return new Promise<void>((r) => release.push(r));
    },
  });
  const turn = () => new Promise((r) => setImmediate(r));
  const finishNext = async () => {
    release.shift()!();
    await turn();
  };
  return { actors, batches, turn, finishNext };
}

describe('heartbeat actors', () => {
  it('runs one step of an actor at a time, taking every ping it queued, in arrival order', async () => {
    const { actors, batches, turn, finishNext } = setup();
    actors.ping('a', 'a1');
    actors.ping('a', 'a2');
    actors.ping('a', 'a3');
    await turn();
    assert.deepEqual(
      batches.map((b) => b.map((s) => s.pings)),
      [[['a1', 'a2', 'a3']]],
    );
    actors.ping('a', 'a4');
    actors.ping('a', 'a5');
    await turn();
    assert.equal(batches.length, 1, 'no second step of the actor while its first runs');
    await finishNext();
    assert.deepEqual(
      batches.map((b) => b.map((s) => s.pings)),
      [[['a1', 'a2', 'a3']], [['a4', 'a5']]],
    );
    await finishNext();
    await actors.idle();
  });

  it('caps the pings of a step and names the ping that follows, which the next step takes', async () => {
    const { actors, batches, turn, finishNext } = setup(10, 1, 2);
    for (const p of ['a1', 'a2', 'a3', 'a4', 'a5']) actors.ping('a', p);
    await turn();
    assert.deepEqual(batches[0], [{ id: 'a', pings: ['a1', 'a2'], following: 'a3', changed: false }]);
    await finishNext();
    assert.deepEqual(batches[1], [{ id: 'a', pings: ['a3', 'a4'], following: 'a5', changed: false }]);
    await finishNext();
    assert.deepEqual(batches[2], [{ id: 'a', pings: ['a5'], following: undefined, changed: false }]);
    await finishNext();
    await actors.idle();
  });

  it('does not let a flooded actor hold back the others: a batch stops at its ping budget and the others come next', async () => {
    const { actors, batches, turn, finishNext } = setup(10, 1, 50, 60);
    for (let i = 0; i < 500; i++) actors.ping('hot', `h${i}`);
    actors.ping('b', 'b1');
    actors.ping('c', 'c1');
    await turn();
    assert.deepEqual(
      batches[0]!.map((s) => [s.id, s.pings.length]),
      [
        ['hot', 50],
        ['b', 1],
        ['c', 1],
      ],
    );
    await finishNext();
    actors.ping('d', 'd1');
    await finishNext();
    assert.deepEqual(
      batches[1]!.map((s) => [s.id, s.pings.length]),
      [['hot', 50]],
    );
    assert.deepEqual(
      batches[2]!.map((s) => [s.id, s.pings.length]),
      [['d', 1]],
      'd waits for one step of hot at most',
    );
    for (let i = 0; i < 9; i++) await finishNext();
    await actors.idle();
    assert.equal(batches.length, 11, 'ten steps of hot, fifty pings each');
    assert.equal(
      batches.flat().reduce((n, s) => n + s.pings.length, 0),
      503,
    );
  });

  it('batches the steps of different actors that wait together', async () => {
    const { actors, batches, turn, finishNext } = setup(3);
    actors.ping('a', 'a1');
    await turn();
    for (const id of ['b', 'c', 'd', 'e']) actors.tick(id);
    actors.ping('a', 'a2');
    await finishNext();
    assert.deepEqual(
      batches[1]!.map((s) => s.id),
      ['b', 'c', 'd'],
      'at most the batch size, in arrival order',
    );
    await finishNext();
    assert.deepEqual(
      batches[2]!.map((s) => s.id),
      ['e', 'a'],
    );
    await finishNext();
    await actors.idle();
  });

  it('folds ticks and change notices into one step, and remembers a change for the next', async () => {
    const { actors, batches, turn, finishNext } = setup();
    actors.tick('a');
    actors.tick('a');
    actors.changed('a');
    await turn();
    assert.deepEqual(batches[0], [{ id: 'a', pings: [], following: undefined, changed: true }]);
    actors.changed('a');
    await finishNext();
    assert.deepEqual(batches[1], [{ id: 'a', pings: [], following: undefined, changed: true }]);
    await finishNext();
    assert.equal(batches.length, 2);
    assert.equal(actors.stats().actors, 0, 'an actor with nothing to do is forgotten');
  });

  it('runs several batches at once up to the concurrency', async () => {
    const { actors, batches, turn } = setup(1, 2);
    for (const id of ['a', 'b', 'c']) actors.tick(id);
    await turn();
    assert.equal(batches.length, 2);
  });

  it('frees the batch slot when a batch is stored, but keeps its actors busy until their events are out', async () => {
    const batches: Step<string>[][] = [];
    let publish!: () => void;
    const published = new Promise<void>((r) => (publish = r));
    const actors = createActors<string>({
      batchSize: 1,
      pingsPerStep: 100,
      pingsPerBatch: 1_000,
      concurrency: 1,
      onError: (err) => assert.fail(String(err)),
      run: async (steps) => {
        batches.push(steps);
        return steps[0]!.id === 'a' && batches.length === 1 ? { after: published } : undefined;
      },
    });
    const turn = () => new Promise((r) => setImmediate(r));
    actors.ping('a', 'a1');
    actors.ping('a', 'a2');
    actors.ping('b', 'b1');
    await turn();
    await turn();
    assert.deepEqual(
      batches.map((b) => b[0]!.pings),
      [['a1', 'a2'], ['b1']],
      'b ran while a1 and a2 were being published',
    );
    actors.ping('a', 'a3');
    await turn();
    assert.equal(batches.length, 2, 'a3 waits for the events of a1 and a2');
    publish();
    await actors.idle();
    assert.deepEqual(
      batches.map((b) => b[0]!.pings),
      [['a1', 'a2'], ['b1'], ['a3']],
    );
  });

  it('drops the queued work of a partition given back and returns its pings', async () => {
    const { actors, batches, turn, finishNext } = setup();
    actors.ping('p1-a', 'x1');
    await turn();
    actors.ping('p1-a', 'x2');
    actors.ping('p1-b', 'y1');
    actors.ping('p2-a', 'z1');
    const { pings, settled } = actors.drop((id) => id.startsWith('p1-'));
    assert.deepEqual(pings.sort(), ['x2', 'y1']);
    let done = false;
    void settled.then(() => (done = true));
    await turn();
    assert.equal(done, false, 'the step in flight is still running');
    await finishNext();
    assert.equal(done, true);
    assert.deepEqual(
      batches[1]!.map((s) => s.pings),
      [['z1']],
    );
    await finishNext();
    await actors.idle();
  });
});
