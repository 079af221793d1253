import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { consumerName } from '../../control-plane/src/heartbeats/deadline/consumer.ts';
import { consumerLeaderElected } from '../../control-plane/src/platform/nats/follow-leader.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { eventually } from '../harness/streams.ts';
import { startNatsCluster, type NatsCluster } from './cluster.ts';
import { startClusterControlPlane, streamLeader, type ClusterControlPlane } from './harness.ts';

/**
 * A deadline role on a 3-node JetStream cluster (PINGS, EVENTS and the buckets R3). The node
 * leading one partition's consumer is killed with SIGKILL, after every stream the role writes to
 * has been led elsewhere: what is measured is the consumer's own leader change.
 */
describe('a deadline partition consumer on a 3-node NATS cluster', () => {
  let cluster: NatsCluster | undefined;
  let cp: ClusterControlPlane | undefined;
  let ada: TestAccount;
  let api: Call;

  before(async () => {
    cluster = await startNatsCluster({ size: 3 });
    cp = await startClusterControlPlane(
      { servers: cluster.servers, replicas: 3 },
      // Pings as fast as the test sends them; two partitions, taken in a moment (sixteen R3
      // consumers can take longer to make than a lease lasts on a busy machine).
      { roles: ['api', 'deadline'], env: { PING_RATE_LIMIT: '0', PING_PARTITIONS: '2' } },
    );
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
  });

  after(async () => {
    for (const step of [async () => cp?.stop(), async () => cluster?.stop()]) {
      await step().catch((err: unknown) => console.error('cleanup step failed:', err));
    }
  });

  it("applies pings again within 10 s of the death of its consumer's leader, none lost, none applied twice", async (t) => {
    const { nc, names, db } = cp!;
    const jsm = await jetstreamManager(nc);
    const res = await api('POST', '/heartbeats', { name: 'Nightly backup', project_id: ada.project_id, grace_period: 3_600 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const id: string = res.body.data.id;
    const durable = consumerName(pingPartition(id, cp!.config.PING_PARTITIONS));

    let acknowledged = 0;
    let sent = 0;
    const ping = async () => {
      sent++;
      const r = await fetch(`${cp!.url}/heartbeat/${id}`);
      await r.text();
      if (r.status === 200) acknowledged++;
      return r.status;
    };
    const applied = async (since = new Date(0)) => {
      const [r] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from heartbeat_pings where heartbeat_id = ${id} and received_at >= ${since}`;
      return r!.n;
    };
    assert.equal(await ping(), 200);
    await eventually(async () => (await applied()) === 1, 'the first ping applied', 20_000);
    // The role holds its partitions steadily: each lease renewed since.
    const leases = await openBucket(nc, names, 'leases', { replicas: 3 });
    const partitions = Array.from({ length: cp!.config.PING_PARTITIONS }, (_, p) => `deadline.${p}`);
    const taken = await Promise.all(partitions.map(async (k) => (await leases.get(k))?.revision ?? 0));
    await eventually(
      async () => (await Promise.all(partitions.map(async (k, i) => ((await leases.get(k))?.revision ?? 0) > taken[i]!))).every(Boolean),
      'every lease renewed',
      20_000,
      200,
    );

    const leader = (await jsm.consumers.info(names.streams.pings, durable)).cluster?.leader;
    assert.ok(leader, `${durable} has a leader`);
    // Streams a step writes to (the pings' own, events, the buckets) move off the node to be killed.
    for (const stream of [names.streams.pings, names.streams.events, `KV_${names.buckets.heartbeats}`, `KV_${names.buckets.leases}`]) {
      await eventually(
        async () => {
          if ((await streamLeader(nc, stream)) !== leader) return true;
          await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, '', { timeout: 5_000 }).catch(() => undefined);
          return false;
        },
        `${stream} led off ${leader}`,
        30_000,
        500,
      );
    }

    let electedAt: number | undefined;
    const elections = nc.subscribe(consumerLeaderElected(names.streams.pings, durable), {
      callback: () => void (electedAt ??= Date.now()),
    });
    await nc.flush();
    const killedAt = Date.now();
    await cluster!.node(leader).kill();
    // Pings keep coming while the consumer elects a new leader.
    let pinging = true;
    const pinger = (async () => {
      while (pinging) {
        await ping().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    try {
      await eventually(async () => (await applied(new Date(killedAt))) > 0, 'a ping sent after the kill applied', 30_000, 100);
    } finally {
      pinging = false;
      await pinger;
      elections.unsubscribe();
    }
    const resumedMs = Date.now() - killedAt;
    t.diagnostic(
      `pings applied again ${resumedMs} ms after the leader of ${durable} (${leader}) died; ` +
        (electedAt ? `its new leader was announced after ${electedAt - killedAt} ms` : 'no election heard'),
    );

    // What the dead leader delivered and never saw answered comes again after the ack wait (10 s).
    // (A ping refused with a 503 may still have been stored: its request is then one more ping.)
    await eventually(async () => (await applied()) >= acknowledged, `all ${acknowledged} acknowledged pings applied`, 25_000, 200).catch(
      async (err: Error) => {
        throw new Error(`${err.message}: ${await applied()} applied`);
      },
    );
    assert.ok(sent < 100, 'within what the ping log keeps');
    assert.ok((await applied()) <= sent, 'each ping applied once');
    assert.ok(resumedMs <= 10_000, `pings applied again ${resumedMs} ms after the consumer leader (${leader}) died`);
  });
});
