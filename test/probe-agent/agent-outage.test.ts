import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ensureStreams, openBucket } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { startNatsServer, type NatsServerHandle } from '../../control-plane/src/platform/embedded/nats-server.ts';
import type { RunningAgent } from '../../probe-agent/src/agent.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { agentConfig, assign, assignment, eventually, quietLog, runAgent, slotMs, storedCount, storedResults } from './agent-helpers.ts';

const reconnecting = (url: string, name: string) =>
  connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 100, waitOnFirstConnect: true });

describe('probe agent while NATS is away', () => {
  const storeDir = mkdtempSync(join(tmpdir(), 'uptime-agent-outage-'));
  const namespace = `t${randomBytes(5).toString('hex')}`;
  const names = natsNames(namespace);
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let kv: KV;
  const stops: Array<() => Promise<unknown>> = [];

  /** Stops nats-server, lets `checks` more checks reach target, and starts it again on the same port and store. */
  async function outage(target: Target, checks: number, whileDown?: () => void): Promise<void> {
    await server.stop();
    await target.waitForRequests(target.requests.length + checks);
    whileDown?.();
    server = await startNatsServer({ storeDir, log: quietLog, port: server.port });
    // The test's own connection comes back on its own schedule, and JetStream recovers its streams
    // after the server listens: the next test starts once both answer.
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    await eventually(
      async () => {
        try {
          await jsm.streams.info(names.streams.results);
          await kv.status();
          return true;
        } catch {
          return false;
        }
      },
      'JetStream back after the restart',
      30_000,
    );
  }

  before(async () => {
    server = await startNatsServer({ storeDir, log: quietLog });
    nc = await reconnecting(server.url, 'outage test');
    await ensureStreams(nc, names, { replicas: 1 });
    kv = await openBucket(nc, names, 'assignments', { replicas: 1 });
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop();
    await nc.close();
    await server.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  async function agentOn(region: string, bufferCapacity?: number): Promise<RunningAgent> {
    const agentNc = await reconnecting(server.url, `agent ${region}`);
    const agent = await runAgent({ config: agentConfig(namespace), nc: agentNc, region, ...(bufferCapacity ? { bufferCapacity } : {}) });
    stops.push(
      () => agentNc.close(),
      () => agent.stop(),
    );
    return agent;
  }

  it('keeps checking, then publishes every buffered result once, in order, when NATS is back', async () => {
    const site = await startTarget();
    stops.push(() => site.close());
    const a = assignment({ region: 'outage', url: site.url });
    await assign(kv, names, a);
    const agent = await agentOn('outage');
    const subject = names.subjects.result('outage', a.monitor_id);
    await eventually(async () => (await storedCount(nc, names, subject)) >= 2, 'results before the outage');

    await outage(site, 4, () => assert.ok(agent.stats().buffered >= 3, `buffered ${agent.stats().buffered}`));

    await eventually(() => agent.stats().buffered === 0, 'the buffer to drain', 30_000);
    await agent.stop();
    const stats = agent.stats();
    assert.ok(stats.publishFailures > 0, 'publishing failed during the outage');
    assert.equal(stats.dropped, 0);
    assert.equal(stats.scheduler.skipped, 0);

    const slots = (await storedResults(nc, names, subject)).map((s) => Date.parse(s.result.scheduled_at));
    assert.equal(slots.length, stats.checks, 'every check stored once');
    assert.equal(slots.length, site.requests.length);
    assert.deepEqual(
      slots.slice(1).map((t, i) => t - slots[i]!),
      Array(slots.length - 1).fill(slotMs),
      'no slot lost, none twice, in order',
    );
  });

  it('drops the oldest results beyond its buffer capacity and counts them', async () => {
    const site = await startTarget();
    stops.push(() => site.close());
    const a = assignment({ region: 'overflow', url: site.url });
    await assign(kv, names, a);
    const agent = await agentOn('overflow', 2);
    const subject = names.subjects.result('overflow', a.monitor_id);
    await eventually(async () => (await storedCount(nc, names, subject)) >= 1, 'a result before the outage');
    const storedBefore = await storedCount(nc, names, subject);

    await outage(site, 5);
    await eventually(() => agent.stats().buffered === 0, 'the buffer to drain', 30_000);
    await agent.stop();
    const stats = agent.stats();
    assert.ok(stats.dropped >= 3, `dropped ${stats.dropped}`);
    assert.equal(await storedCount(nc, names, subject), stats.checks - stats.dropped);
    assert.ok(stats.checks - stats.dropped >= storedBefore + 2);
  });
});
