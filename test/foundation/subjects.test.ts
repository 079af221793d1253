import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { natsNames } from '../../shared/src/subjects.ts';

describe('NATS names', () => {
  const n = natsNames('prod');

  it('prefixes every stream, bucket and subject with the namespace', () => {
    assert.equal(n.streams.results, 'prod_RESULTS');
    assert.equal(n.buckets.assignments, 'prod_assignments');
    assert.equal(n.subjects.result('eu-west', 'abc'), 'prod.results.eu-west.abc');
    assert.equal(n.subjects.ping(3, 'hb'), 'prod.pings.3.hb');
    assert.equal(n.subjects.event('p1', 'monitor.down'), 'prod.events.p1.monitor.down');
    assert.equal(n.keys.agent('eu-west', 'a1'), 'eu-west.a1');
  });

  it("refuses tokens that would change a subject's shape", () => {
    assert.throws(() => natsNames('a.b'), /namespace/);
    assert.throws(() => n.subjects.result('eu.west', 'abc'), /region/);
    assert.throws(() => n.subjects.result('eu', 'a*'), /monitor id/);
    assert.throws(() => n.subjects.event('p', 'down'), /event kind/);
  });
});
