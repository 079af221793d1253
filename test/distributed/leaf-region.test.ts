import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager, type StreamConfig } from '@nats-io/jetstream';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { connectNats, type NatsConnection } from '../../shared/src/nats.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { freePorts, natsNode, nodesHealthy, scratchDir, type NatsNode } from './cluster.ts';
import { allResults, slotKey, startClusterControlPlane, type ClusterControlPlane } from './harness.ts';
import { startLink, type Link } from './link.ts';

/**
 * The leaf-node layout of docs/deployment.md on one machine: a hub (JetStream domain "hub") where
 * the control plane runs, and region us-east as a leaf node with a domain of its own, connected
 * through a TCP relay the test can cut. Streams and mirrors are made from the files operators use
 * (deploy/nats/leafnodes/streams/), and the leaf's deny_exports comes from deploy/nats/leafnodes/region.conf.
 */
const timeScale = 0.2;
const slotMs = 5_000 * timeScale;
const region = 'us-east';
const deployDir = fileURLToPath(new URL('../../deploy/nats/leafnodes/', import.meta.url));

type StreamFile = Partial<StreamConfig> & { name: string };

function streamFiles(side: 'hub' | 'region'): StreamFile[] {
  const dir = join(deployDir, 'streams', side);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8').replaceAll('REGION', region)) as StreamFile);
}

const denyExports = /deny_exports:\s*(\[[^\]]*\])/.exec(readFileSync(join(deployDir, 'region.conf'), 'utf8'))?.[1];

// The hub advertises the relay as its leaf node address: a region that learnt the real one would
// reconnect around the relay the test cuts.
function hubConfig(p: { client: number; http: number; leaf: number; relay: number; store: string }): string {
  return `server_name: hub-1
listen: "127.0.0.1:${p.client}"
http: "127.0.0.1:${p.http}"
jetstream { domain: hub, store_dir: "${p.store}" }
leafnodes { listen: "127.0.0.1:${p.leaf}", advertise: "127.0.0.1:${p.relay}" }
`;
}

function regionConfig(p: { client: number; http: number; hubLeaf: number; store: string }): string {
  return `server_name: ${region}-1
listen: "127.0.0.1:${p.client}"
http: "127.0.0.1:${p.http}"
jetstream { domain: ${region}, store_dir: "${p.store}" }
leafnodes {
  reconnect: 1
  remotes: [ { url: "nats-leaf://127.0.0.1:${p.hubLeaf}", deny_exports: ${denyExports} } ]
}
`;
}

async function leafConnections(node: NatsNode): Promise<number> {
  const res = await fetch(`${node.monitorUrl}/leafz`);
  return ((await res.json()) as { leafnodes: number }).leafnodes;
}

describe('a region on a leaf node with a JetStream domain of its own', () => {
  let dir: string | undefined;
  let hub: NatsNode | undefined;
  let leaf: NatsNode | undefined;
  let link: Link | undefined;
  let operator: NatsConnection | undefined;
  let regional: NatsConnection | undefined;
  let cp: ClusterControlPlane | undefined;
  let agent: RunningAgent | undefined;
  let target: Target | undefined;
  let ada: TestAccount;
  let api: Call;
  let pinned: string;
  let live: string;
  const heartbeatId = randomUUID();

  const hubResults = () => allResults(cp!.nc, cp!.names.streams.results, `uptime.results.${region}.>`);
  const regionJsm = () => jetstreamManager(regional!);
  const regionalResults = () => allResults(regional!, `uptime_RESULTS_${region}`);

  before(async () => {
    assert.ok(denyExports, 'deploy/nats/leafnodes/region.conf has deny_exports');
    dir = scratchDir('uptime-leaf-');
    const [hubClient, hubHttp, hubLeaf, leafClient, leafHttp] = (await freePorts(5)) as [number, number, number, number, number];
    for (const d of ['hub', region]) mkdirSync(join(dir, d));
    link = await startLink(hubLeaf);
    hub = natsNode({
      name: 'hub-1',
      dir,
      clientPort: hubClient,
      httpPort: hubHttp,
      config: hubConfig({ client: hubClient, http: hubHttp, leaf: hubLeaf, relay: link.port, store: join(dir, 'hub') }),
    });
    await hub.start();
    leaf = natsNode({
      name: `${region}-1`,
      dir,
      clientPort: leafClient,
      httpPort: leafHttp,
      config: regionConfig({ client: leafClient, http: leafHttp, hubLeaf: link.port, store: join(dir, region) }),
    });
    await leaf.start();
    await nodesHealthy([hub, leaf]);
    await eventually(async () => (await leafConnections(hub!)) === 1, 'the region connected to the hub', 10_000, 100);

    // The operator's steps, in order: hub streams with their sources, then the control plane, then the region.
    operator = await connectNats({ servers: hub.url, name: 'operator', log: quietLog });
    const hubJsm = await jetstreamManager(operator);
    for (const cfg of streamFiles('hub')) await hubJsm.streams.add({ ...cfg, num_replicas: 1 });
    cp = await startClusterControlPlane({ servers: hub.url, replicas: 1, namespace: 'uptime' }, { roles: ['api', 'assign', 'ingest'] });
    // What the deadline role keeps: the ids a ping edge may accept.
    await (await openBucket(cp.nc, cp.names, 'heartbeats', { replicas: 1 })).put(heartbeatId, '{}');

    regional = await connectNats({ servers: leaf.url, name: 'uptime-probe-agent', log: quietLog });
    const regionJsm = await jetstreamManager(regional);
    for (const cfg of streamFiles('region')) await regionJsm.streams.add(cfg);
    const agentConfig = loadConfig({ NATS_URL: leaf.url, NATS_NAMESPACE: 'uptime', NATS_REPLICAS: '1', LOG_LEVEL: 'silent' });
    agent = await startAgent({
      config: agentConfig,
      nc: regional,
      log: quietLog,
      region,
      port: 0,
      timeScale,
      checkKey: cp.cp.keys.checkCredentials,
    });

    target = await startTarget({ status: 200, body: 'ok' });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    const create = async (name: string, regions: string[] | null) => {
      const res = await api('POST', '/monitors', {
        name,
        url: `${target!.url}/${name}`,
        project_id: ada.project_id,
        interval: 5,
        timeout: 2,
        regions,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as string;
    };
    pinned = await create('pinned', [region]);
    live = await create('live', null);
  });

  after(async () => {
    const steps: (() => Promise<unknown>)[] = [
      async () => agent?.stop(),
      async () => regional?.close(),
      async () => operator?.close(),
      async () => cp?.stop(),
      async () => link?.close(),
      async () => leaf?.stop(),
      async () => hub?.stop(),
      async () => target?.close(),
      async () => dir && rmSync(dir, { recursive: true, force: true }),
    ];
    for (const step of steps) await step().catch((err: unknown) => console.error('cleanup step failed:', err));
  });

  it('delivers what the region checks to the central RESULTS and to Postgres through stream sources', async () => {
    const sql = cp!.db.sql;
    // The live-regions monitor reaches the region only if the hub sees its agents: presence is sourced too.
    await eventually(
      async () => {
        const got = await hubResults();
        return [pinned, live].every((id) => got.filter((r) => r.monitor_id === id).length >= 2);
      },
      'results of both monitors in the central RESULTS',
      30_000,
      200,
    );
    await eventually(
      async () => (await sql`select distinct monitor_id from check_results where region = ${region}`).length === 2,
      'results of both monitors in Postgres',
      10_000,
      100,
    );
    const jsm = await jetstreamManager(cp!.nc);
    const sources = (await jsm.streams.info(cp!.names.streams.results)).config.sources?.map((s) => s.name) ?? [];
    assert.ok(sources.includes(`uptime_RESULTS_${region}`), `the control plane kept the sources an operator added (${sources.join(', ')})`);
    // Agents were acknowledged by the region's stream; the hub holds each slot once, sourced.
    const keys = (await hubResults()).map(slotKey);
    assert.equal(new Set(keys).size, keys.length);
    const inRegion = new Set((await regionalResults()).map(slotKey));
    assert.ok(
      keys.every((k) => inRegion.has(k)),
      'every central result came from the regional stream',
    );
  });

  it('keeps checking and accepting pings while cut off from the hub, then catches up', async () => {
    const cutAt = Date.now();
    link!.cut();
    await eventually(async () => (await leafConnections(leaf!)) === 0, 'the region cut off', 10_000, 50);
    const checksAtCut = agent!.stats().checks;

    // The regional ping edge's two steps work without the hub: the id lookup and the publish.
    const heartbeats = await openBucket(regional!, cp!.names, 'heartbeats', { replicas: 1 });
    assert.equal((await heartbeats.get(heartbeatId))?.operation, 'PUT', 'heartbeat id known in the region');
    const ping = await jetstream(regional!).publish(
      cp!.names.subjects.ping(0, heartbeatId),
      JSON.stringify({ heartbeat_id: heartbeatId }),
      { msgID: `ping-${heartbeatId}` },
    );
    assert.equal(ping.stream, `uptime_PINGS_${region}`);

    await eventually(
      async () => agent!.stats().checks >= checksAtCut + 8,
      'four more slots of both monitors checked while cut off',
      15_000,
      100,
    );
    await eventually(async () => agent!.stats().buffered === 0, 'every result acknowledged by the regional stream', 5_000, 50);
    const late = (await hubResults()).filter((r) => Date.parse(r.scheduled_at) > cutAt + 2 * slotMs);
    assert.equal(late.length, 0, 'nothing crossed while the link was down');

    const restoredAt = Date.now();
    link!.restore();
    await eventually(
      async () => (await hubResults()).some((r) => Date.parse(r.scheduled_at) > restoredAt),
      'results flowing to the hub again',
      60_000,
      250,
    );

    await agent!.stop();
    const regionalNow = await regionalResults();
    assert.equal(regionalNow.length, agent!.stats().checks, 'the regional stream holds every check');
    const wanted = new Set(regionalNow.map(slotKey));
    await eventually(
      async () => {
        const got = new Set((await hubResults()).map(slotKey));
        return got.size === wanted.size && [...wanted].every((k) => got.has(k));
      },
      'every regional result in the central RESULTS',
      30_000,
      250,
    );
    const sql = cp!.db.sql;
    await eventually(
      async () => {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from check_results where region = ${region}`;
        return row!.n === wanted.size;
      },
      'every regional result in Postgres',
      30_000,
      250,
    );
    // PINGS is sourced apart from RESULTS: its backlog may cross a moment later.
    const pings = await eventually(
      async () => {
        const jsm = await jetstreamManager(cp!.nc);
        return (
          (await jsm.streams.getMessage(cp!.names.streams.pings, { last_by_subj: cp!.names.subjects.ping(0, heartbeatId) })) ?? undefined
        );
      },
      'the ping taken while cut off in the central PINGS',
      30_000,
      250,
    );
    assert.equal(pings.header?.get('Nats-Msg-Id'), `ping-${heartbeatId}`, 'the ping taken while cut off reached the central PINGS');
    const local = await regionJsm().then((m) =>
      m.streams.getMessage(`uptime_PINGS_${region}`, { last_by_subj: cp!.names.subjects.ping(0, heartbeatId) }),
    );
    // The hub stores a sourced ping with the time it arrived there, which is the instant the deadline
    // role goes by (docs/deployment.md); the regional copy keeps the time the edge took it.
    assert.ok(local && local.time.getTime() < restoredAt && pings.time.getTime() >= restoredAt);
  });
});
