/**
 * Part 13, heartbeats at scale: 1,000,000 active heartbeats held by one deadline process, then
 * by three (each its share of the partitions): memory per heartbeat, time to load the partitions
 * after a restart, and pings applied per second over a minute while misses are still judged.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { jetstreamManager } from '@nats-io/jetstream';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { consumerName } from '../../control-plane/src/heartbeats/deadline/consumer.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { startScript, type Service } from '../lib/child.ts';
import { benchDatabase, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { machineCpuTicks } from '../lib/proc.ts';
import { round, summarize, type Summary } from '../lib/stats.ts';
import { expireAt } from './alerts-setup.ts';
import type { PingsArgs, PingsDone } from './heartbeat-scale-pings.ts';
import type { RoleArgs, RoleMessage, RoleReady, RoleStats, Weight } from './heartbeat-scale-role.ts';
import { awaitDownEvents, insertQuiet } from './misses-setup.ts';

const partitions = 16;
const goals = {
  /** Heap per heartbeat held: the misses part's goal, at ten times its heartbeats. */
  heapBytes: 200,
  /** Resident memory the process grows by per heartbeat, once loaded. */
  rssBytes: 400,
  /** Highest resident memory while loading, per heartbeat. */
  peakRssBytes: 1_000,
  /** Partitions loaded after a restart: within the lease TTL (10 s), so a takeover costs at most twice that. */
  loadS: 10,
  /** Pings applied a second, kept up for the whole run. */
  pingsPerSecond: 5_000,
  /** Misses judged while those pings are applied: the down event after the grace ran out, p99. */
  missP99Ms: 1_000,
};
const n = (v: number) => Math.round(v).toLocaleString('en');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

type Layout = {
  processes: number;
  /** From the processes' start (the role's start in each) to every heartbeat armed once, every partition held and loaded. */
  loadS: number;
  /** From the same start to the KV keys reconciled too, in the background after the loads (the memory is weighed then). */
  reconcileS: number;
  /** Each process's loads ("partitions loaded" in its log): more than one when partitions moved between them. */
  loads: { count: number; armedS: number; totalS: number; kvS: number; reconciles: number }[];
  perProcess: { heartbeats: number; partitions: number; heapBytes: number; rssBytes: number; peakRssBytes: number; rss: number }[];
  /** What the processes held when they had not settled by the limit. */
  unsettled?: string;
  leaseLosses: number;
  pings?: {
    offered: number;
    published: number;
    /** Applied a second, from 10 s into the run to its end. */
    applied: number;
    /** Pings published and not yet applied when the load stopped. */
    backlog: number;
    /** How long the backlog took to be applied after the load stopped. */
    drainS: number;
    cpuUsPerPing: number;
    machineBusy: number;
    load: number;
  };
  misses?: Summary & { missing: number; watched: number };
};

await runPart('heartbeat-scale', 'Heartbeats at scale', async (ctx) => {
  const q = ctx.quick;
  const total = q ? 50_000 : 1_000_000;
  const runMs = q ? 15_000 : 60_000;
  const warmMs = q ? 3_000 : 10_000;
  const rate = q ? 2_000 : goals.pingsPerSecond;
  const watched = q ? 300 : 3_000;
  const settleMs = q ? 60_000 : 120_000;

  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const db = await benchDatabase(ctx, adminUrl);
  const { nc, names, namespace } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });
  const jsm = await jetstreamManager(nc);
  const user = await createUser(db.sql, { email: 'scale@bench.test', password: 'a long bench password' });
  const t0 = performance.now();
  await insertQuiet(db.sql, user.project_id, total);
  await db.sql`analyze heartbeats`;
  const [{ size }] = (await db.sql`select pg_total_relation_size('heartbeats')::float8 as size`) as unknown as [{ size: number }];
  ctx.log(`${n(total)} heartbeats inserted in ${round((performance.now() - t0) / 1000, 1)} s (${round(size / 2 ** 20)} MiB with indexes)`);
  // Heartbeats whose misses are watched, two sets (one per layout); they get no ping.
  const order = ((await db.sql`select id from heartbeats order by id limit ${2 * watched}`) as unknown as { id: string }[]).map(
    (r) => r.id,
  );
  const watchedSets = [order.slice(0, watched), order.slice(watched)];

  const roles: Service<RoleReady>[] = [];
  let started = 0;
  const startRole = async () => {
    const args: RoleArgs = { databaseUrl: db.url, natsUrl, namespace, partitions, app: `uptime-bench-deadline-${++started}` };
    const s = await startScript<RoleReady>('parts/heartbeat-scale-role.ts', [JSON.stringify(args)], {
      nodeFlags: ['--expose-gc'],
      timeoutMs: 600_000,
      label: `deadline ${started}`,
    });
    ctx.cleanup(() => s.stop());
    return s;
  };
  const stats = (s: Service<RoleReady>) => s.request<RoleStats>({ op: 'stats' } satisfies RoleMessage);
  const weigh = (s: Service<RoleReady>) => s.request<Weight>({ op: 'weigh' } satisfies RoleMessage);
  const kvKeys = async () => (await jsm.streams.info(`KV_${names.buckets.heartbeats}`)).state.messages;
  /** Pings published to the partitions and not yet applied (not delivered, or not acknowledged). */
  const outstanding = async () => {
    let sum = 0;
    for (let p = 0; p < partitions; p++) {
      const c = await jsm.consumers.info(names.streams.pings, consumerName(p)).catch(() => undefined);
      sum += c ? c.num_pending + c.num_ack_pending : 0;
    }
    return sum;
  };

  /** Resolves once the processes hold every partition, each its share, loaded, with every heartbeat armed once; or at the limit. */
  const settled = async (ss: Service<RoleReady>[], limitMs: number): Promise<{ all: RoleStats[]; ok: boolean; state: string }> => {
    // Heartbeats down (the watched ones of a layout before) have no deadline to arm.
    const [{ armable }] = (await db.sql`select count(*)::int as armable from heartbeats where active and status <> 'down'`) as unknown as [
      { armable: number },
    ];
    const share = Math.ceil(partitions / ss.length);
    for (const deadline = performance.now() + limitMs; ; await sleep(100)) {
      const all = await Promise.all(ss.map(stats));
      const owned = all.flatMap((s) => s.owned);
      const armed = all.reduce((t, s) => t + s.armed, 0);
      if (
        new Set(owned).size === partitions &&
        owned.length === partitions &&
        all.every((s) => s.loading === 0 && s.owned.length <= share) &&
        armed === armable
      )
        return { all, ok: true, state: '' };
      if (process.env.BENCH_LOG_LEVEL === 'debug')
        ctx.log(
          all
            .map((s) => `[${s.owned.join(',')}] armed ${s.armed} loading ${s.loading} loop ${Math.round(s.loopDelayMaxMs)} ms`)
            .join(' | '),
        );
      if (performance.now() > deadline)
        return {
          all,
          ok: false,
          state: all.map((s) => `${s.owned.length} partitions, ${n(s.armed)} armed, ${s.loading} loading`).join('; '),
        };
    }
  };

  // First start: the role fills KV `heartbeats` (the ping edges' view), as after an upgrade.
  const first = await startRole();
  const firstLoadS = first.ready.startMs / 1000;
  for (const deadline = performance.now() + 300_000; (await kvKeys()) < total;) {
    if (performance.now() > deadline) throw new Error('KV heartbeats was not filled within 300 s');
    await sleep(200);
  }
  ctx.log(`first start (KV filled): ${round(firstLoadS, 1)} s`);
  await first.stop();

  const layout = async (count: number, watch: string[]): Promise<Layout> => {
    const from = Date.now();
    const ss = await Promise.all(Array.from({ length: count }, startRole));
    roles.push(...ss);
    const { all, ok, state } = await settled(ss, settleMs);
    const loadS = ok ? (Date.now() - Math.min(...ss.map((s) => s.ready.startedAt))) / 1000 : NaN;
    const leaseLosses = all.reduce((t, s) => t + s.leaseLosses, 0);
    if (!ok) ctx.log(`${count} process(es): not settled within ${settleMs / 1000} s (${state}); ${leaseLosses} lease losses`);
    ctx.log(`${count} process(es): loaded in ${round(loadS, 1)} s (spawned ${round((Date.now() - from) / 1000, 1)} s ago)`);
    // Memory is weighed, and pings sent, once the KV keys are reconciled too: its listing in the
    // background is transient (its map of wanted keys, the pages read), not what a heartbeat costs.
    let reconciled = all;
    for (const deadline = performance.now() + settleMs; reconciled.some((st) => st.reconciling) && performance.now() < deadline;) {
      await sleep(200);
      reconciled = await Promise.all(ss.map(stats));
    }
    const reconcileS = (Date.now() - Math.min(...ss.map((s) => s.ready.startedAt))) / 1000;
    ctx.log(`${count} process(es): KV keys reconciled ${round(reconcileS, 1)} s after the start`);
    const loads = reconciled.map((st) => ({
      count: st.loads.length,
      armedS: st.loads.reduce((t, l) => t + l.armedMs, 0) / 1000,
      totalS: st.loads.reduce((t, l) => t + l.ms, 0) / 1000,
      // KV keys are reconciled after the deadlines are armed, apart from the load (one listing for the loads since the last).
      kvS: st.reconciles.reduce((t, r) => t + r.ms, 0) / 1000,
      reconciles: st.reconciles.length,
    }));
    ctx.log(
      `  loads: ${loads.map((l) => `${l.count} (rows and deadlines ${round(l.armedS, 1)} s; then ${l.reconciles} KV reconcile(s) ${round(l.kvS, 1)} s)`).join('; ')}`,
    );
    const perProcess = [];
    for (const [i, s] of ss.entries()) {
      const w = await weigh(s);
      // A process that holds nothing (a layout that did not settle) has no memory per heartbeat.
      const held = all[i]!.armed || NaN;
      perProcess.push({
        heartbeats: all[i]!.armed,
        partitions: all[i]!.owned.length,
        heapBytes: (w.heap - s.ready.before.heap) / held,
        rssBytes: (w.rss - s.ready.before.rss) / held,
        peakRssBytes: (w.peakRss - s.ready.before.rss) / held,
        rss: w.rss,
      });
    }
    for (const p of perProcess)
      ctx.log(
        `  ${n(p.heartbeats)} heartbeats, ${p.partitions} partitions: heap ${round(p.heapBytes)} B, RSS ${round(p.rssBytes)} B, peak RSS ${round(p.peakRssBytes)} B per heartbeat (RSS ${round(p.rss / 2 ** 20)} MiB)`,
      );

    if (!ok) {
      for (const s of ss) await s.stop();
      return { processes: count, loadS, reconcileS, unsettled: state, leaseLosses, loads, perProcess };
    }
    // A minute of pings at a fixed rate, while the watched heartbeats' graces run out, spread
    // from the end of the warm-up to ten seconds before the end.
    const load = await startScript<{ ready: true; heartbeats: number }>(
      'parts/heartbeat-scale-pings.ts',
      [
        JSON.stringify({
          databaseUrl: db.url,
          natsUrl,
          namespace,
          partitions,
          perSecond: rate,
          durationMs: runMs,
          skipFirst: 2 * watched,
          window: 1_000,
        } satisfies PingsArgs),
      ],
      { timeoutMs: 120_000, label: 'pings' },
    );
    ctx.cleanup(() => load.stop());
    const loadStart = Date.now() + 1_000;
    const spreadFrom = loadStart + warmMs;
    const due = await expireAt(db.sql, watch, spreadFrom, runMs - warmMs - 10_000);
    const downs = awaitDownEvents(nc, names, due, loadStart + runMs + 60_000 - Date.now());
    await nc.flush();
    await sleep(loadStart - Date.now());
    const done = load.request<PingsDone>({ op: 'go' }, runMs + 60_000);
    await sleep(warmMs);
    const cpu = async () =>
      (await Promise.all(ss.map(stats))).reduce((t, s) => ({ pings: t.pings + s.pings, cpuUs: t.cpuUs + s.cpuUs }), { pings: 0, cpuUs: 0 });
    const a = { ...(await cpu()), at: performance.now(), machine: machineCpuTicks() };
    const published = await done;
    const b = { ...(await cpu()), at: performance.now(), machine: machineCpuTicks() };
    const averageLoad = loadavg()[0]!;
    await load.stop();
    const backlog = await outstanding();
    const drainFrom = performance.now();
    for (const deadline = drainFrom + 300_000; (await outstanding()) > 0;) {
      if (performance.now() > deadline) throw new Error('the ping backlog was not applied within 300 s');
      await sleep(200);
    }
    const drainS = backlog > 0 ? (performance.now() - drainFrom) / 1000 : 0;
    const missed = await downs;
    const m = summarize(missed.delays);
    const applied = (1000 * (b.pings - a.pings)) / (b.at - a.at);
    const pings = {
      offered: rate,
      published: (1000 * published.stored) / published.wallMs,
      applied,
      backlog,
      drainS,
      cpuUsPerPing: (b.cpuUs - a.cpuUs) / Math.max(1, b.pings - a.pings),
      machineBusy: (b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total),
      load: averageLoad,
    };
    ctx.log(
      `  pings: offered ${n(rate)}/s, stored ${n(pings.published)}/s, applied ${n(applied)}/s (${round(pings.cpuUsPerPing)} µs of the role processes' CPU each, machine ${Math.round(pings.machineBusy * 100)}% busy); backlog ${n(backlog)} at the end, applied in ${round(drainS, 1)} s`,
    );
    ctx.log(
      `  misses meanwhile: p50 ${round(m.p50)} p99 ${round(m.p99)} max ${round(m.max)} ms, ${missed.missing} of ${watch.length} missing`,
    );
    for (const s of ss) await s.stop();
    return {
      processes: count,
      loadS,
      reconcileS,
      leaseLosses,
      loads,
      perProcess,
      pings,
      misses: { ...m, missing: missed.missing, watched: watch.length },
    };
  };

  const one = await layout(1, watchedSets[0]!);
  const three = await layout(3, watchedSets[1]!);

  ctx.method.push(
    `${n(total)} active heartbeats (period 1 h, grace 60 s, next ping hours ahead) inserted with one SQL statement, ${round(size / 2 ** 20)} MiB with indexes; ${partitions} partitions. Each deadline process is a process of its own (\`bench/parts/heartbeat-scale-role.ts\`: \`startDeadline\` with its own pool of 10, NATS connection and outbox, as \`uptime control-plane --roles deadline\` holds it).`,
    `First start: one process, KV \`heartbeats\` empty, so it writes every key (${round(firstLoadS, 1)} s; not a goal). Then the layouts, each started on the full KV as after a restart: one process holding the ${partitions} partitions, then three started together, which share them through their leases (fair share ${Math.ceil(partitions / 3)}).`,
    'Load time = from the role starting in the processes (the earliest, modules and connections aside) until every partition is held by one of them and loaded (rows read, deadlines armed, KV keys reconciled), every heartbeat armed once, each process at most its share.',
    'Memory per heartbeat of each process = (heap used after forced collections, or RSS, once loaded) − (the same in the process before its role started), / the heartbeats it holds. Peak RSS = VmHWM, the highest resident memory of the process, loading included, less the RSS before the role started.',
    `Pings: another process publishes success pings to heartbeats drawn at random from all but the watched ones, as a ping edge does (\`createAckPublisher\`, at most 1,000 awaiting their ack), at ${n(rate)} a second for ${runMs / 1000} s. Applied a second = pings the roles applied (logged, state written, acknowledged) from ${warmMs / 1000} s into the run to its end, / that time; backlog = pings published and not yet applied when the load stopped. CPU per ping = the role processes' own CPU over the same time, / pings applied.`,
    `Misses meanwhile: ${n(watched)} other heartbeats are made late the way an API update does (the change trigger tells the role), their graces running out spread evenly from ${warmMs / 1000} s into the run to 10 s before its end; delay = arrival of their heartbeat.down on EVENTS − the instant the grace ran out.`,
  );
  for (const l of [one, three]) {
    const label = l.processes === 1 ? 'One process' : 'Three processes';
    const each = (f: (p: Layout['perProcess'][number]) => number, digits = 0) => l.perProcess.map((p) => round(f(p), digits)).join(', ');
    const worst = (f: (p: Layout['perProcess'][number]) => number) => Math.max(...l.perProcess.map(f).filter(Number.isFinite));
    const per = l.processes > 1 ? ` (each process: ${each((p) => p.heartbeats)} heartbeats)` : '';
    ctx.figures.push(
      {
        metric: `${label}: load of ${n(total)} heartbeats after a restart${l.unsettled ? ` (not settled within ${settleMs / 1000} s: ${l.unsettled})` : ''}`,
        value: round(l.loadS, 1),
        unit: 's',
      },
      {
        metric: `${label}: of which rows read and deadlines armed, ${l.processes > 1 ? 'the longest of the processes' : 'in the process'} (loads of partitions: ${l.loads.map((x) => x.count).join(', ')}; KV keys listed and reconciled afterwards, apart from the load: ${l.loads.map((x) => `${round(x.kvS, 1)} s in ${x.reconciles}`).join(', ')})`,
        value: round(Math.max(...l.loads.map((x) => x.armedS)), 1),
        unit: 's',
      },
      {
        metric: `${label}: KV keys of the partitions reconciled (in the background, resting as long as it works), from the start`,
        value: round(l.reconcileS, 1),
        unit: 's',
      },
      {
        metric: `${label}: partition leases lost while loading and running (logged by the processes)`,
        value: l.leaseLosses,
        unit: 'times',
      },
      {
        metric: `${label}: heap per heartbeat held${l.processes > 1 ? `, the highest of ${each((p) => p.heapBytes)}` : ''}`,
        value: Math.round(worst((p) => p.heapBytes)),
        unit: 'bytes',
      },
      {
        metric: `${label}: RSS per heartbeat held, once loaded${l.processes > 1 ? `, the highest of ${each((p) => p.rssBytes)}` : ''}`,
        value: Math.round(worst((p) => p.rssBytes)),
        unit: 'bytes',
      },
      {
        metric: `${label}: peak RSS per heartbeat held, loading included${l.processes > 1 ? `, the highest of ${each((p) => p.peakRssBytes)}` : ''}`,
        value: Math.round(worst((p) => p.peakRssBytes)),
        unit: 'bytes',
      },
      {
        metric: `${label}: RSS of the process${l.processes > 1 ? 'es' : ''}${per}`,
        value: round(l.perProcess.reduce((t, p) => t + p.rss, 0) / 2 ** 20),
        unit: 'MiB',
      },
    );
    if (l.pings && l.misses)
      ctx.figures.push(
        {
          metric: `${label}: pings applied a second over ${(runMs - warmMs) / 1000} s, ${n(rate)} offered (stored ${n(l.pings.published)}/s; machine ${Math.round(l.pings.machineBusy * 100)}% busy, load ${round(l.pings.load, 2)})`,
          value: Math.round(l.pings.applied),
          unit: 'pings/s',
        },
        {
          metric: `${label}: pings not yet applied when the load stopped (applied within ${round(l.pings.drainS, 1)} s)`,
          value: l.pings.backlog,
          unit: '',
        },
        {
          metric: `${label}: CPU of the deadline process${l.processes > 1 ? 'es' : ''} per ping applied`,
          value: round(l.pings.cpuUsPerPing),
          unit: 'µs',
        },
        {
          metric: `${label}: misses judged while pinged, down event after grace ran out, p50 / max ${round(l.misses.p50)} / ${round(l.misses.max)} ms; p99`,
          value: round(l.misses.p99, 1),
          unit: 'ms',
        },
      );
  }
  ctx.figures.push({
    metric: `First start on an empty KV (keys written for ${n(total)} heartbeats), one process`,
    value: round(firstLoadS, 1),
    unit: 's',
  });

  const goal = (label: string, l: Layout) => {
    const finite = (f: (p: Layout['perProcess'][number]) => number) => l.perProcess.map(f).filter(Number.isFinite);
    const heap = Math.max(...finite((p) => p.heapBytes));
    const rss = Math.max(...finite((p) => p.rssBytes));
    const peak = Math.max(...finite((p) => p.peakRssBytes));
    const worst = l.processes > 1 ? ' (the highest of the processes)' : '';
    const loadMet = l.loadS <= goals.loadS;
    ctx.goals.push(
      {
        goal: `${label}: at most ${goals.heapBytes} bytes of heap per heartbeat held`,
        actual: `${Math.round(heap)} bytes${worst}`,
        met: heap <= goals.heapBytes,
        ...(heap <= goals.heapBytes ? {} : { shortfall: `${Math.round(heap - goals.heapBytes)} bytes over` }),
      },
      {
        goal: `${label}: at most ${goals.rssBytes} bytes of RSS per heartbeat held once loaded, ${n(goals.peakRssBytes)} at the peak of the load`,
        actual: `${Math.round(rss)} bytes, peak ${Math.round(peak)} bytes${worst}`,
        met: rss <= goals.rssBytes && peak <= goals.peakRssBytes,
        ...(rss <= goals.rssBytes && peak <= goals.peakRssBytes
          ? {}
          : { shortfall: `${round(Math.max(rss / goals.rssBytes, peak / goals.peakRssBytes), 1)}x the limit` }),
      },
      {
        goal: `${label}: ${n(total)} heartbeats loaded within ${goals.loadS} s of a restart`,
        actual: l.unsettled ? `not settled within ${settleMs / 1000} s (${l.leaseLosses} lease losses)` : `${round(l.loadS, 1)} s`,
        met: loadMet,
        ...(loadMet ? {} : { shortfall: l.unsettled ? 'never settled' : `${round(l.loadS - goals.loadS, 1)} s over` }),
      },
    );
    if (!l.pings || !l.misses) {
      ctx.goals.push(
        {
          goal: `${label}: ${n(rate)} pings a second applied for ${runMs / 1000} s`,
          actual: 'not measured: the processes never settled',
          met: false,
        },
        { goal: `${label}: misses judged meanwhile, p99 at most ${n(goals.missP99Ms)} ms`, actual: 'not measured', met: false },
      );
      return;
    }
    const keptUp = l.pings.applied >= 0.98 * rate && l.pings.backlog <= rate;
    const missOk = l.misses.p99 <= goals.missP99Ms && l.misses.missing === 0;
    ctx.goals.push(
      {
        goal: `${label}: ${n(rate)} pings a second applied for ${runMs / 1000} s, kept up with (backlog at the end at most a second of pings)`,
        actual: `${n(l.pings.applied)} pings/s, backlog ${n(l.pings.backlog)}`,
        met: keptUp,
        ...(keptUp ? {} : { shortfall: `${round(l.pings.applied / rate, 2)}x the rate` }),
      },
      {
        goal: `${label}: misses judged meanwhile, p99 at most ${n(goals.missP99Ms)} ms from grace running out to the down event`,
        actual: `${round(l.misses.p99, 1)} ms${l.misses.missing > 0 ? `, ${l.misses.missing} missing` : ''}`,
        met: missOk,
        ...(missOk ? {} : { shortfall: `${round(l.misses.p99 / goals.missP99Ms, 1)}x the limit` }),
      },
    );
  };
  goal('One process', one);
  goal('Three processes', three);
  ctx.notes.push(
    `Goals: ${goals.heapBytes} bytes of heap per heartbeat is the misses part's goal at ten times its heartbeats; ${goals.loadS} s of load is the lease TTL, so a process taking over a dead one's partitions (which waits for its leases to expire) judges their deadlines again within twice the TTL; ${n(goals.pingsPerSecond)} pings a second is ${n(total)} heartbeats pinging every ${Math.round(total / goals.pingsPerSecond)} s on average.`,
    `The database of the part (${round(size / 2 ** 20)} MiB of heartbeats, the ping log of the runs) and its NATS streams and buckets are dropped at the end.`,
  );
});
