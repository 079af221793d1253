import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams, openBucket } from '../../shared/src/provision.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';

describe('stream provisioning', () => {
  let nats: TestNats;
  before(async () => {
    nats = await createTestNats();
  });
  after(() => nats.close());

  it('creates the namespaced streams, also when processes provision at the same time', async () => {
    await Promise.all([1, 2, 3].map(() => ensureStreams(nats.nc, nats.names, { replicas: 1 })));
    const jsm = await jetstreamManager(nats.nc);
    for (const name of Object.values(nats.names.streams)) {
      const info = await jsm.streams.info(name);
      assert.equal(info.config.name, name);
      assert.ok(
        info.config.subjects?.every((s) => s.startsWith(`${nats.namespace}.`)),
        `${name} subjects are namespaced`,
      );
    }
  });

  it('keeps a stream when provisioning runs again, with its messages', async () => {
    const js = (await import('@nats-io/jetstream')).jetstream(nats.nc);
    await js.publish(nats.names.subjects.result('local', 'm1'), '{}');
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
    const jsm = await jetstreamManager(nats.nc);
    assert.equal((await jsm.streams.info(nats.names.streams.results)).state.messages, 1);
  });

  it('opens the agents bucket with a TTL so dead agents disappear', async () => {
    const kv = await openBucket(nats.nc, nats.names, 'agents', { replicas: 1 });
    const status = await kv.status();
    assert.equal(status.ttl, 15_000);
  });
});
