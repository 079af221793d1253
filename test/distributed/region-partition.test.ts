import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, type RunningAgent } from '../../probe-agent/src/agent.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { DEPLOYMENT_PROJECT_ID, DomainEvent } from '../../shared/src/contracts/events.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { quietLog } from '../harness/db.ts';
import { eventually } from '../harness/streams.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, type Target } from '../harness/http.ts';
import { startNatsCluster, type ClusterNode, type NatsCluster } from './cluster.ts';
import { connectToNode, startClusterControlPlane, type ClusterControlPlane } from './harness.ts';

/**
 * A region's network cut while its agent still reaches NATS: three regions, each agent on its
 * own node of a 3-node JetStream cluster and sending its checks from its own loopback address
 * (CHECK_SOURCE_ADDRESS), so the targets and the canaries can drop one region's connections.
 * Agents run 5x faster: a 5 s interval is a 1 s slot, so the 180 s cut is 180 rounds, the
 * checks of 15 minutes at that interval.
 */
const timeScale = 0.2;
const slotMs = 5_000 * timeScale;
const cutMs = Number(process.env.PARTITION_CUT_MS ?? 180_000);
const regions = [
  { region: 'eu-west', source: '127.0.0.2' },
  { region: 'us-east', source: '127.0.0.3' },
  { region: 'ap-south', source: '127.0.0.4' },
] as const;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('a region cut off from the targets and its canaries', () => {
  let cluster: NatsCluster | undefined;
  let cp: ClusterControlPlane | undefined;
  const agents: { agent: RunningAgent; nc: NatsConnection }[] = [];
  let site: Target;
  let canary: Target;
  let ada: TestAccount;
  let api: Call;
  const monitorIds: string[] = [];
  const events: { event: DomainEvent; at: number }[] = [];
  let waiters: { test: (e: DomainEvent) => boolean; resolve: () => void }[] = [];

  before(async () => {
    cluster = await startNatsCluster({ size: 3 });
    cp = await startClusterControlPlane(
      { servers: cluster.servers, replicas: 3 },
      { roles: ['api', 'assign', 'ingest'], regionHealthPeriodMs: 250 },
    );
    site = await startTarget({ status: 200, body: 'ok' });
    canary = await startTarget({ status: 204 });
    const sub = cp.nc.subscribe(`${cp.names.namespace}.events.>`, {
      callback: (_err, m) => {
        const event = DomainEvent.parse(m.json());
        events.push({ event, at: Date.now() });
        waiters = waiters.filter((w) => (w.test(event) ? (w.resolve(), false) : true));
      },
    });
    void sub;
    for (const [i, r] of regions.entries()) {
      const node = cluster.nodes[i] as ClusterNode;
      const nc = await connectToNode(cluster, node, `uptime-probe-agent-${r.region}`);
      const config = loadConfig({
        ...Object.fromEntries(Object.entries(cp.config).filter(([, v]) => typeof v === 'string')),
        NATS_NAMESPACE: cp.config.NATS_NAMESPACE,
        LOG_LEVEL: 'silent',
        CANARY_URLS: `${canary.url}/canary`,
        CANARY_INTERVAL: '5',
        CHECK_SOURCE_ADDRESS: r.source,
      });
      const agent = await startAgent({
        config,
        nc,
        log: quietLog,
        region: r.region,
        port: 0,
        timeScale,
        checkKey: cp.cp.keys.checkCredentials,
      });
      agents.push({ agent, nc });
    }
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    for (let i = 0; i < 20; i++) {
      const res = await api('POST', '/monitors', {
        name: `site ${i}`,
        url: `${site.url}/page/${i}`,
        project_id: ada.project_id,
        interval: 5,
        timeout: 2,
        regions: regions.map((r) => r.region),
        quorum: 2,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      monitorIds.push(res.body.data.id);
    }
  });

  after(async () => {
    const steps: (() => Promise<unknown>)[] = [
      ...agents.map((a) => async () => {
        await a.agent.stop();
        await a.nc.close();
      }),
      async () => cp?.stop(),
      async () => cluster?.stop(),
      async () => site?.close(),
      async () => canary?.close(),
    ];
    for (const step of steps) await step().catch((err: unknown) => console.error('cleanup step failed:', err));
  });

  const next = (test: (e: DomainEvent) => boolean) => new Promise<void>((resolve) => waiters.push({ test, resolve }));
  const statuses = async () =>
    (await cp!.db.sql<{ status: number }[]>`select status from monitors where id = any(${monitorIds}::uuid[])`).map((r) => r.status);

  it('abstains instead of alerting: no monitor alert and one region event while eu-west is cut', async () => {
    // Every monitor up from every region first (pending to up is no event: read it).
    const sql = cp!.db.sql;
    await eventually(
      async () => {
        const [row] = await sql<{ n: number }[]>`
          select count(*)::int as n from monitor_regions where monitor_id = any(${monitorIds}::uuid[]) and ok`;
        return row!.n === monitorIds.length * regions.length && (await statuses()).every((s) => s === 1);
      },
      'every monitor up from every region',
      30_000,
      100,
    );
    const degraded = next((e) => e.kind === 'region.degraded');
    site.cut('127.0.0.2');
    canary.cut('127.0.0.2');
    const cutAt = Date.now();
    await degraded;
    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + cutMs - Date.now())));
    // The region's agent kept checking (and failing) the whole time.
    const [row] = await sql<{ failed: number }[]>`
      select count(*)::int as failed from check_results where monitor_id = any(${monitorIds}::uuid[])
        and region = 'eu-west' and not ok and checked_at >= ${new Date(cutAt).toISOString()}`;
    const failed = row!.failed;
    assert.ok(failed >= monitorIds.length * 10, `eu-west results failed during the cut: ${failed}`);
    const recovered = next((e) => e.kind === 'region.recovered');
    site.heal('127.0.0.2');
    canary.heal('127.0.0.2');
    await recovered;

    const monitorEvents = events.filter((e) => e.event.subject.type === 'monitor');
    assert.deepEqual(monitorEvents, [], 'no monitor event');
    const regionEvents = events.filter((e) => e.event.project_id === DEPLOYMENT_PROJECT_ID).map((e) => [e.event.kind, e.event.data.region]);
    assert.deepEqual(regionEvents, [
      ['region.degraded', 'eu-west'],
      ['region.recovered', 'eu-west'],
    ]);
    assert.ok((await statuses()).every((s) => s === 1));
  });

  it('alerts on a real outage seen from every region within the interval and 5 s at p95', async () => {
    const downs = new Map<string, number>();
    // Records each monitor's first down, and resolves once every monitor has one.
    const all = new Promise<void>((resolve) =>
      waiters.push({
        test: (e) => {
          if (e.kind === 'monitor.down' && !downs.has(e.subject.id)) downs.set(e.subject.id, Date.now());
          return downs.size === monitorIds.length;
        },
        resolve,
      }),
    );
    const start = Date.now();
    site.respond({ status: 503, body: 'down' });
    await all;
    const latencies = [...downs.values()].map((t) => t - start).sort((a, b) => a - b);
    const p95 = percentile(latencies, 95);
    console.log(`outage seen from 3 regions, quorum 2: monitor.down after p50 ${percentile(latencies, 50)} ms, p95 ${p95} ms`);
    // The interval is 5 s at 1/5 speed: one slot.
    assert.ok(p95 <= slotMs + 5_000, `p95 ${p95} ms`);
    const down = events.filter((e) => e.event.kind === 'monitor.down');
    assert.equal(down.length, monitorIds.length, 'one alert per monitor');
    // The alert goes out as soon as a quorum of regions fails: the regions it names are the ones
    // whose failures had arrived by then (two or three, as the results of the slot come in).
    const all3 = regions.map((r) => r.region as string).sort();
    for (const d of down) {
      const named = d.event.data.regions as string[];
      assert.ok(named.length >= 2 && named.every((r) => all3.includes(r)), `regions named: ${named.join(', ')}`);
    }
    // Every region sees the outage.
    await eventually(
      async () => {
        const [row] = await cp!.db.sql<{ n: number }[]>`
          select count(*)::int as n from monitor_regions where monitor_id = any(${monitorIds}::uuid[]) and not ok`;
        return row!.n === monitorIds.length * regions.length;
      },
      'every monitor failing from every region',
      10_000,
      100,
    );
  });
});
