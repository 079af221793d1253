import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rendezvousOwner, rendezvousWeight } from '../../probe-agent/src/peers/rendezvous.ts';

const monitors = Array.from({ length: 20_000 }, () => randomUUID());
const ownersOf = (agents: string[]) => new Map(monitors.map((m) => [m, rendezvousOwner(m, agents)!]));

describe('rendezvous hashing', () => {
  it('has no owner without candidates', () => {
    assert.equal(rendezvousOwner('m', []), undefined);
  });

  it('gives every monitor to its only agent', () => {
    assert.equal(rendezvousOwner(monitors[0]!, ['a1']), 'a1');
  });

  it('picks the same owner whatever the order of the candidates', () => {
    for (const m of monitors.slice(0, 500)) {
      assert.equal(rendezvousOwner(m, ['a1', 'a2', 'a3']), rendezvousOwner(m, ['a3', 'a1', 'a2']));
    }
  });

  it('weighs a pair the same on every call and keeps concatenations apart', () => {
    assert.equal(rendezvousWeight('monitor', 'agent'), rendezvousWeight('monitor', 'agent'));
    assert.notEqual(rendezvousWeight('ab', 'c'), rendezvousWeight('a', 'bc'));
    assert.ok(Number.isSafeInteger(rendezvousWeight('x', 'y')));
  });

  it('spreads monitors evenly over the agents', () => {
    const agents = ['eu-1', 'eu-2', 'eu-3', 'eu-4'];
    const counts = new Map<string, number>();
    for (const owner of ownersOf(agents).values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
    for (const a of agents) {
      const share = (counts.get(a) ?? 0) / monitors.length;
      assert.ok(Math.abs(share - 0.25) < 0.02, `${a} owns ${share}`);
    }
  });

  it('moves only the monitors of an agent that leaves', () => {
    const before = ownersOf(['a1', 'a2', 'a3']);
    const after = ownersOf(['a1', 'a3']);
    for (const [m, owner] of before) {
      if (owner !== 'a2') assert.equal(after.get(m), owner);
      else assert.notEqual(after.get(m), 'a2');
    }
  });

  it('gives a joining agent about its share, taken from every peer, and moves nothing else', () => {
    const before = ownersOf(['a1', 'a2', 'a3']);
    const after = ownersOf(['a1', 'a2', 'a3', 'a4']);
    const takenFrom = new Map<string, number>();
    for (const [m, owner] of after) {
      if (owner === 'a4') takenFrom.set(before.get(m)!, (takenFrom.get(before.get(m)!) ?? 0) + 1);
      else assert.equal(owner, before.get(m));
    }
    const taken = [...takenFrom.values()].reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(taken / monitors.length - 0.25) < 0.02);
    assert.deepEqual([...takenFrom.keys()].sort(), ['a1', 'a2', 'a3']);
  });
});
