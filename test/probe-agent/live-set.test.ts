import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLiveSet } from '../../probe-agent/src/peers/live-set.ts';

describe('live set of a region', () => {
  it('always holds the agent itself, which never expires or leaves', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    assert.deepEqual(live.members(), ['me']);
    assert.equal(live.seen('me', 0), false);
    assert.equal(live.left('me'), false);
    assert.deepEqual(live.expire(1_000_000), []);
    assert.deepEqual(live.members(), ['me']);
  });

  it('adds a peer when its presence is heard and reports only the first time', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    assert.equal(live.seen('b', 1_000), true);
    assert.equal(live.seen('b', 6_000), false);
    assert.deepEqual(live.members(), ['b', 'me']);
  });

  it('drops a peer whose key was deleted', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    live.seen('b', 0);
    assert.equal(live.left('b'), true);
    assert.equal(live.left('b'), false);
    assert.deepEqual(live.members(), ['me']);
  });

  it('expires a peer silent for longer than the ttl, and not a moment before', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    live.seen('b', 1_000);
    live.seen('c', 5_000);
    assert.deepEqual(live.expire(16_000), []);
    assert.deepEqual(live.expire(16_001), ['b']);
    assert.deepEqual(live.members(), ['c', 'me']);
  });

  it('keeps the latest time a peer was heard, whatever order the news arrives in', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    live.seen('b', 10_000);
    live.seen('b', 2_000);
    assert.deepEqual(live.expire(20_000), []);
  });

  it('gives every peer a fresh ttl after this agent was cut off', () => {
    const live = createLiveSet({ self: 'me', ttlMs: 15_000 });
    live.seen('b', 0);
    live.refreshAll(60_000);
    assert.deepEqual(live.expire(70_000), []);
    assert.deepEqual(live.expire(75_001), ['b']);
  });
});
