import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { startNatsCluster, type NatsCluster } from '../distributed/cluster.ts';
import { streamLeader } from '../distributed/harness.ts';
import { assertClean } from './assert.ts';
import { writeResults, type ResultRow } from './results.ts';
import { runFault, startSuite, type Suite } from './suite.ts';

/**
 * kill -9 of nats-server nodes under steady traffic: a 3-node JetStream cluster on loopback
 * (streams and buckets R3), two control-plane processes and two probe agents started through the
 * CLI with every node in NATS_URL.
 */
describe('killed NATS nodes', () => {
  let database: TestDatabase | undefined;
  let cluster: NatsCluster | undefined;
  let suite: Suite | undefined;
  const rows: ResultRow[] = [];

  before(async () => {
    database = await createTestDatabase({ migrate: false });
    cluster = await startNatsCluster({ size: 3 });
    suite = await startSuite({ databaseUrl: database.url, natsServers: cluster.servers, replicas: 3 });
  });

  after(async () => {
    if (rows.length > 0) writeResults(import.meta.url, rows);
    await suite?.stop();
    await cluster?.stop();
    await database?.drop();
  });

  it('loses and doubles nothing when one node is killed with SIGKILL and restarted', async () => {
    const s = suite!;
    const c = cluster!;
    const { row, failures } = await runFault(s, {
      name: 'NATS node: kill -9, restart (3-node cluster)',
      async inject(cycle) {
        const node = c.nodes[(cycle - 1) % c.nodes.length]!;
        await node.kill();
        await node.start();
        return { healedAt: Date.now() };
      },
      // The next node goes only once the restarted one has caught up (the rolling-restart rule).
      afterRecovery: () => c.healthy(60_000),
    });
    rows.push(row);
    writeResults(import.meta.url, rows);
    assertClean(row, failures);
  });

  it('loses and doubles nothing when the leader of PINGS or RESULTS is killed with SIGKILL', async () => {
    const s = suite!;
    const c = cluster!;
    const killed: string[] = [];
    let victim: string | undefined;
    const { row, failures } = await runFault(s, {
      name: 'NATS stream leader (PINGS, RESULTS): kill -9',
      async inject(cycle) {
        const stream = cycle % 2 === 1 ? s.dep.names.streams.pings : s.dep.names.streams.results;
        victim = await streamLeader(s.dep.nc, stream);
        killed.push(`${stream.split('_')[1]} ${victim}`);
        await c.node(victim).kill();
        // Nothing is repaired: recovery is measured with the leader dead.
        return { healedAt: Date.now() };
      },
      async afterRecovery() {
        if (victim) await c.node(victim).start();
        await c.healthy(60_000);
      },
      notes: () => `leaders killed: ${killed.join(', ')}`,
    });
    rows.push(row);
    writeResults(import.meta.url, rows);
    assertClean(row, failures);
  });
});
