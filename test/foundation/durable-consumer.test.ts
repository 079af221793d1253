import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { durableConsumer } from '../../control-plane/src/platform/nats/durable.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';

describe('durable consumers', () => {
  let nats: TestNats;
  before(async () => {
    nats = await createTestNats();
    await ensureStreams(nats.nc, nats.names, { replicas: 1 });
  });
  after(() => nats.close());

  it('takes the unanswered-delivery cap of the running release for a consumer an older release made', async () => {
    const stream = nats.names.streams.pings;
    const jsm = await jetstreamManager(nats.nc);
    const config = { durable_name: 'deadline-3', filter_subject: nats.names.subjects.pingPartition(3) };
    await durableConsumer(nats.nc, stream, { ...config, max_ack_pending: 1_000 });
    await durableConsumer(nats.nc, stream, { ...config, max_ack_pending: 4_000 });
    assert.equal((await jsm.consumers.info(stream, 'deadline-3')).config.max_ack_pending, 4_000);
  });
});
