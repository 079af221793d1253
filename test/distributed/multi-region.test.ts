import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { INGEST_CONSUMER } from '../../control-plane/src/monitors/ingest/consumer.ts';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { startNatsCluster, type ClusterNode, type NatsCluster } from './cluster.ts';
import {
  allResults,
  connectToNode,
  nextStatus,
  recordArrivals,
  resultCount,
  slotKey,
  startClusterControlPlane,
  streamLeader,
  type ClusterControlPlane,
} from './harness.ts';

/**
 * Three regions on one machine: a 3-node JetStream cluster on loopback (streams and buckets R3),
 * a control plane connected to every node, and probe agents whose regions each start on a
 * different node (eu-west: two agents on n1; us-east: n2; ap-south: n3). Agents run 5x faster,
 * so a 5 s interval is a 1 s slot. Nodes are killed with SIGKILL.
 */
const timeScale = 0.2;
const slotMs = 5_000 * timeScale;
const regions = ['eu-west', 'us-east', 'ap-south'] as const;
type Region = (typeof regions)[number];

interface RegionalAgent {
  region: Region;
  node: ClusterNode;
  nc: NatsConnection;
  agent: RunningAgent;
}

interface Monitor {
  id: string;
  name: string;
  regions: readonly Region[];
}

describe('multi-region operation on a 3-node NATS cluster', () => {
  let cluster: NatsCluster | undefined;
  let cp: ClusterControlPlane | undefined;
  const agents: RegionalAgent[] = [];
  let healthy: Target | undefined;
  let failing: Target | undefined;
  let arrivals: Awaited<ReturnType<typeof recordArrivals>>;
  let ada: TestAccount;
  let api: Call;
  const monitors: Monitor[] = [];
  let down: Monitor;

  const startRegionalAgent = async (region: Region, node: ClusterNode): Promise<RegionalAgent> => {
    const nc = await connectToNode(cluster!, node, `uptime-probe-agent-${region}`);
    try {
      const agent = await startAgent({
        config: cp!.config,
        nc,
        log: quietLog,
        region,
        port: 0,
        timeScale,
        checkKey: cp!.cp.keys.checkCredentials,
      });
      const a = { region, node, nc, agent };
      agents.push(a);
      return a;
    } catch (err) {
      await nc.close();
      throw err;
    }
  };
  const inRegion = (region: Region) => agents.filter((a) => a.region === region);
  const ids = () => monitors.map((m) => m.id);
  const storedSlots = async () => {
    const sql = cp!.db.sql;
    const rows = await sql<{ key: string }[]>`
      select monitor_id || ':' || region || ':' || (extract(epoch from scheduled_at) * 1000)::bigint as key
      from check_results where monitor_id in ${sql(ids())}`;
    return new Set(rows.map((r) => r.key));
  };

  before(async () => {
    cluster = await startNatsCluster({ size: 3 });
    cp = await startClusterControlPlane({ servers: cluster.servers, replicas: 3 }, { roles: ['api', 'assign', 'ingest'] });
    const [n1, n2, n3] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await startRegionalAgent('eu-west', n1);
    await startRegionalAgent('eu-west', n1);
    await startRegionalAgent('us-east', n2);
    await startRegionalAgent('ap-south', n3);
    arrivals = await recordArrivals(cp.nc, cp.names);
    healthy = await startTarget({ status: 200, body: 'ok' });
    failing = await startTarget({ status: 503, body: 'maintenance' });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);

    const specs: { name: string; url: string; regions: readonly Region[] | null }[] = [
      ...[1, 2, 3, 4].map((i) => ({ name: `everywhere ${i}`, url: `${healthy!.url}/e${i}`, regions: regions })),
      { name: 'two regions', url: `${healthy.url}/two`, regions: ['eu-west', 'us-east'] },
      { name: 'live regions', url: `${healthy.url}/live`, regions: null },
      { name: 'down everywhere', url: `${failing.url}/down`, regions: regions },
    ];
    for (const s of specs) {
      const res = await api('POST', '/monitors', {
        name: s.name,
        url: s.url,
        project_id: ada.project_id,
        interval: 5,
        timeout: 2,
        regions: s.regions,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      monitors.push({ id: res.body.data.id, name: s.name, regions: s.regions ?? regions });
    }
    down = monitors.find((m) => m.name === 'down everywhere')!;
  });

  after(async () => {
    const steps: (() => Promise<unknown>)[] = [
      async () => arrivals?.stop(),
      ...agents.map((a) => async () => {
        await a.agent.stop();
        await a.nc.close();
      }),
      async () => cp?.stop(),
      async () => cluster?.stop(),
      async () => healthy?.close(),
      async () => failing?.close(),
    ];
    for (const step of steps) await step().catch((err: unknown) => console.error('cleanup step failed:', err));
  });

  it('checks each monitor from each of its regions and from no other', async () => {
    const { nc, names } = cp!;
    await eventually(
      async () => {
        for (const m of monitors) {
          for (const r of m.regions) if ((await resultCount(nc, names.streams.results, names.subjects.result(r, m.id))) < 2) return false;
        }
        return true;
      },
      'two results per monitor and region',
      20_000,
      100,
    );
    const two = monitors.find((m) => m.name === 'two regions')!;
    assert.equal(
      await resultCount(nc, names.streams.results, names.subjects.result('ap-south', two.id)),
      0,
      'ap-south is not a region of this monitor',
    );

    // Each region's results came from that region's agents, and reached Postgres through ingest.
    for (const r of regions) {
      const from = new Set((await allResults(nc, names.streams.results, `${names.namespace}.results.${r}.>`)).map((x) => x.agent_id));
      assert.ok(
        [...from].every((id) => inRegion(r).some((a) => a.agent.agentId === id)),
        `results of ${r} from ${[...from].join(', ')}`,
      );
    }
    const sql = cp!.db.sql;
    await eventually(
      async () => {
        const rows = await sql<{ monitor_id: string; region: string }[]>`
          select distinct monitor_id, region from check_results where monitor_id in ${sql(ids())}`;
        return rows.length === monitors.reduce((n, m) => n + m.regions.length, 0);
      },
      'stored results for every monitor and region',
      10_000,
      100,
    );
    await eventually(
      async () => (await api('GET', `/monitors/${down.id}`)).body.data.status === 2,
      'the failing monitor down by quorum',
      15_000,
      100,
    );
    for (const m of monitors.filter((x) => x !== down)) assert.equal((await api('GET', `/monitors/${m.id}`)).body.data.status, 1, m.name);
  });

  it("moves a stopped agent's monitors to its peer in the same region within 5 s", async (t) => {
    const [a, b] = inRegion('eu-west') as [RegionalAgent, RegionalAgent];
    const [leaving, peer] = a.agent.stats().owned >= b.agent.stats().owned ? [a, b] : [b, a];
    // What the leaving agent checks now: its latest eu-west result per monitor.
    const since = Date.now();
    await arrivals.until(
      (all) => monitors.every((m) => all.some((x) => x.at >= since && x.result.monitor_id === m.id && x.result.region === 'eu-west')),
      'a fresh eu-west result of every monitor',
      5_000,
    );
    const latest = new Map<string, string>();
    for (const x of arrivals.arrivals) if (x.result.region === 'eu-west') latest.set(x.result.monitor_id, x.result.agent_id);
    const moving = [...latest].filter(([, agentId]) => agentId === leaving.agent.agentId).map(([id]) => id);
    assert.ok(moving.length > 0, 'the leaving agent owned monitors');

    const stoppedAt = Date.now();
    const stopping = leaving.agent.stop();
    await arrivals.until(
      (all) =>
        moving.every((id) =>
          all.some(
            (x) =>
              x.at >= stoppedAt && x.result.monitor_id === id && x.result.region === 'eu-west' && x.result.agent_id === peer.agent.agentId,
          ),
        ),
      `the peer checking the ${moving.length} monitors it took over`,
      5_000,
    );
    const tookMs = Date.now() - stoppedAt;
    t.diagnostic(`the peer took ${moving.length} monitors over in ${tookMs} ms`);
    await stopping;
    assert.ok(tookMs <= 5_000, `took over in ${tookMs} ms`);
    assert.equal(peer.agent.stats().owned, monitors.length);
    assert.deepEqual(peer.agent.members(), [peer.agent.agentId]);

    // The hand-over checked no slot twice.
    const handover = arrivals.arrivals.filter((x) => x.result.region === 'eu-west' && x.at >= stoppedAt - 2 * slotMs);
    const keys = handover.map((x) => slotKey(x.result));
    assert.equal(new Set(keys).size, keys.length, 'no eu-west slot published twice');
  });

  it('loses no result when the node an agent is connected to is killed', async (t) => {
    const { nc, names } = cp!;
    const us = inRegion('us-east')[0]!;
    const filter = `${names.namespace}.results.us-east.>`;
    assert.equal(us.nc.info?.server_name, us.node.name);

    const reconnected = nextStatus(us.nc, 'reconnect', 20_000);
    const checksAtKill = us.agent.stats().checks;
    const killedAt = Date.now();
    await us.node.kill();
    await reconnected;
    t.diagnostic(`the agent reconnected ${Date.now() - killedAt} ms after its node (${us.node.name}) died`);
    assert.notEqual(us.nc.info?.server_name, us.node.name, 'reconnected to another node');
    await eventually(async () => us.agent.stats().checks >= checksAtKill + 3, 'three more slots checked after the kill', 15_000, 100);

    // Every slot the agent checked is in RESULTS once: the count read first can only catch up.
    await eventually(
      async () => {
        const stored = await resultCount(nc, names.streams.results, filter);
        const s = us.agent.stats();
        return s.buffered === 0 && stored === s.checks;
      },
      'every us-east check stored',
      15_000,
      100,
    );
    const s = us.agent.stats();
    assert.equal(s.dropped, 0);
    const results = await eventually(() => allResults(nc, names.streams.results, filter), 'reading us-east results', 20_000, 200);
    const keys = results.map(slotKey);
    assert.equal(new Set(keys).size, keys.length, 'each slot stored once');
    // Slots are contiguous per monitor, but for any the scheduler itself skipped (a late process).
    let missing = 0;
    for (const m of monitors.filter((x) => x.regions.includes('us-east'))) {
      const slots = results
        .filter((r) => r.monitor_id === m.id)
        .map((r) => Date.parse(r.scheduled_at))
        .sort((x, y) => x - y);
      for (let i = 1; i < slots.length; i++) missing += Math.round((slots[i]! - slots[i - 1]!) / slotMs) - 1;
    }
    assert.ok(missing <= s.scheduler.skipped, `${missing} slots missing, ${s.scheduler.skipped} skipped by the scheduler`);

    await us.node.start();
    await cluster!.healthy(30_000);
  });

  it('resumes ingestion within 10 s of a stream leader kill, with no acknowledged result lost and no second incident', async (t) => {
    const { nc, names } = cp!;
    const sql = cp!.db.sql;
    const leader = cluster!.node(await streamLeader(nc, names.streams.results));
    const ingestLeader = (await (await jetstreamManager(nc)).consumers.info(names.streams.results, INGEST_CONSUMER)).cluster?.leader;
    // When the new leaders were announced: what the recovery time is made of.
    const elected = new Map<string, number>();
    const announcements: Record<string, string> = {
      [`$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.${names.streams.results}`]: 'RESULTS',
      [`$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${names.streams.results}.${INGEST_CONSUMER}`]: 'ingest consumer',
    };
    const elections = nc.subscribe('$JS.EVENT.ADVISORY.*.LEADER_ELECTED.>', {
      callback: (_err, m) => {
        const what = announcements[m.subject];
        if (what) elected.set(what, Date.now());
      },
    });
    await nc.flush();
    const killedAt = Date.now();
    await leader.kill();
    await eventually(
      async () => {
        const [row] = await sql<{ n: number }[]>`
          select count(*)::int as n from check_results where monitor_id in ${sql(ids())} and scheduled_at > ${new Date(killedAt)}`;
        return row!.n > 0;
      },
      'a result checked after the kill stored in Postgres',
      20_000,
      100,
    );
    // Asserted last, so a slow recovery still gets its losses and duplicates checked.
    const resumedMs = Date.now() - killedAt;
    const announced = [...elected].map(([what, at]) => `${what} leader elected after ${at - killedAt} ms`).join(', ');
    t.diagnostic(
      `ingestion resumed ${resumedMs} ms after the RESULTS leader (${leader.name}) died; the ingest consumer's leader was ${ingestLeader}; ${announced || 'no election heard'}`,
    );
    elections.unsubscribe();
    const newLeader = await eventually(async () => streamLeader(nc, names.streams.results), 'a new RESULTS leader', 10_000, 100);
    assert.notEqual(newLeader, leader.name);

    // Stopping the agents flushes what they hold: from here on nothing changes.
    for (const a of agents) await a.agent.stop();
    const stream = await eventually(() => allResults(nc, names.streams.results), 'reading RESULTS', 20_000, 200);
    const keys = stream.map(slotKey);
    assert.equal(new Set(keys).size, keys.length, 'each slot stored once in RESULTS');
    for (const r of regions) {
      const checks = inRegion(r).reduce((n, a) => n + a.agent.stats().checks, 0);
      const stored = stream.filter((x) => x.region === r).length;
      assert.equal(stored, checks, `${r}: every check stored (${stored} of ${checks})`);
      for (const a of inRegion(r)) assert.equal(a.agent.stats().dropped, 0);
    }
    // What RESULTS acknowledged reaches Postgres, once. Results the dead consumer leader had
    // delivered but not seen acknowledged come again when the ingest consumer's ack wait runs out.
    const ingest = await eventually(
      () => jetstreamManager(nc).then((m) => m.consumers.info(names.streams.results, INGEST_CONSUMER)),
      'ingest consumer info',
      10_000,
      200,
    );
    const redeliveryMs = (ingest.config.ack_wait ?? 30_000_000_000) / 1_000_000;
    const wanted = new Set(keys);
    const difference = async () => {
      const got = await storedSlots();
      return { missing: [...wanted].filter((k) => !got.has(k)), extra: [...got].filter((k) => !wanted.has(k)) };
    };
    await eventually(
      async () => {
        const d = await difference();
        return d.missing.length === 0 && d.extra.length === 0;
      },
      'every acknowledged result in Postgres',
      redeliveryMs + 15_000,
      200,
    ).catch(async (err: Error) => {
      const d = await difference();
      throw new Error(
        `${err.message}: ${d.missing.length} missing (${d.missing.slice(0, 5).join(', ')}), ${d.extra.length} not in RESULTS (${d.extra.slice(0, 5).join(', ')})`,
      );
    });

    const incidents = await sql<{ monitor_id: string; ended_at: Date | null }[]>`
      select monitor_id, ended_at from incidents where monitor_id in ${sql(ids())}`;
    assert.deepEqual(
      incidents.map((i) => [i.monitor_id, i.ended_at]),
      [[down.id, null]],
      'one open incident, for the failing monitor',
    );
    // EVENTS may have lost its leader with the node too: read it once it has a new one.
    await eventually(async () => streamLeader(nc, names.streams.events), 'an EVENTS leader', 20_000, 100);
    const events = (await eventually(() => readStream(nc, names.streams.events), 'reading EVENTS', 20_000, 200)).filter(
      (e) => e.data.subject?.id === down.id,
    );
    assert.deepEqual(
      events.map((e) => e.data.kind),
      ['monitor.down'],
    );
    assert.ok(resumedMs <= 10_000, `ingestion resumed ${resumedMs} ms after the leader (${leader.name}) died`);
  });
});
