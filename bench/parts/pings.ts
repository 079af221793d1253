/**
 * Part 3, ping ingestion: pings/s acknowledged by JetStream through the ping endpoint at fixed
 * rates and at saturation, against a Fastify route that does nothing (the ceiling) and raw
 * windowed JetStream publishing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { startScript, type Service } from '../lib/child.ts';
import { benchDatabase, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { findWrk, pacedLoad, wrkLoad, wrkVersion, type LoadArgs, type LoadResult } from '../lib/load.ts';
import { NotRun, runPart } from '../lib/part.ts';
import { machineCpuTicks, processCpuUs, waitIdle } from '../lib/proc.ts';
import type { ProfileSummary } from '../lib/profile.ts';
import { publishWindowed, successPing } from '../lib/publish.ts';
import { round, sig } from '../lib/stats.ts';
import type { LoopDelay, ServerArgs, ServerReady } from './pings-server.ts';

const rates = [1_000, 5_000, 10_000];
const goalRate = 10_000;
const goalP99Ms = 25;
const goalShareOfRaw = 0.4;
const partitions = 16;

type Series = {
  rates: Record<number, LoadResult>;
  busy: Record<number, number>;
  serverCpu: Record<number, number>;
  loopDelay: Record<number, LoopDelay>;
  saturation: LoadResult;
  saturationCpu: { server: number; machine: number };
  burst?: LoadResult;
  burstBusy?: number;
  burstServerCpu?: number;
};

await runPart('pings', 'Ping ingestion', async (ctx) => {
  const q = ctx.quick;
  const seconds = q ? { rate: 2, saturation: 3, burst: 1 } : { rate: 5, saturation: 10, burst: 2 };
  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const db = await benchDatabase(ctx, adminUrl);
  const { nc, names, namespace } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'uptime-bench-pings-'));
  ctx.cleanup(() => rmSync(dir, { recursive: true, force: true }));

  const user = await createUser(db.sql, { email: 'pings@bench.test', password: 'a long bench password' });
  const ids = (
    (await db.sql`
    insert into heartbeats (project_id, name, grace_period, period)
    select ${user.project_id}, 'job ' || g, 300, 3600 from generate_series(1, 1000) g
    returning id`) as unknown as { id: string }[]
  ).map((r) => r.id);
  const paths = ids.map((id) => `/heartbeat/${id}`);
  const wrk = findWrk();
  if (wrk) ctx.versions['wrk'] = wrkVersion(wrk);
  else
    ctx.notes.push(
      "wrk is missing (apt-get install wrk): saturation was driven by the bench's own generator, which needs more CPU per request.",
    );

  // The floor of what the endpoint adds to: JetStream acks alone, a window of them outstanding.
  const rawCount = q ? 20_000 : 100_000;
  const rawPublish = async () => {
    const raw = await publishWindowed(
      nc,
      rawCount,
      (i) => {
        const id = ids[i % ids.length]!;
        const ping = successPing(id, 'bench');
        return { subject: names.subjects.ping(pingPartition(id, partitions), id), payload: JSON.stringify(ping), msgId: ping.id };
      },
      256,
    );
    rawAcked += raw.acked;
    const rate = (raw.acked * 1000) / raw.wallMs;
    ctx.log(`raw windowed publish: ${Math.round(rate)}/s`);
    return rate;
  };
  let rawAcked = 0;
  const rawRates = [await rawPublish()];

  ctx.method.push(
    `Servers in a process of their own on 127.0.0.1: the control plane's app (\`buildApp\`; its /heartbeat/<id> checks the id in Postgres, publishes the ping to PINGS and answers 200 once JetStream acknowledged it) and the ceiling, a bare Fastify route answering "OK". ${ids.length.toLocaleString('en')} heartbeats, pinged in turn with GET.`,
    "How the endpoint does it (shared/src/pings/): the ids of the pings that arrive in one turn of the event loop are checked in one query (`id = any(...)`, up to 4 queries in flight), so the answer is always Postgres's (a deleted heartbeat gets 404 at once); the pings of one turn go to NATS in one socket write, each with its own reply subject on one shared subscription, any number in flight, and each request awaits the PubAck of its own ping (same `Nats-Msg-Id` on a retry). No access-log line per ping.",
    `Fixed rates ${rates.map((r) => r.toLocaleString('en')).join(', ')}/s for ${seconds.rate} s each; saturation for ${seconds.saturation} s with ${wrk ? 'wrk (-t2 -c128)' : 'the same generator, closed loop (128 connections)'}; burst: 10 × 5,000/s offered for ${seconds.burst} s on 512 connections, every answer awaited (up to 30 s).`,
    'Fixed rates and the burst come from bench/parts/pings-load.ts in its own process: open loop (request i is due at start + i / rate and its latency counts from then, as wrk2 does), after 1 s of warm-up that is not counted. It writes HTTP/1.1 requests on plain keep-alive sockets and reads the status line and content-length itself, as wrk does: an HTTP client library (undici) costs about 40 µs of CPU per request, which on two cores took the CPU the server needed, so the burst measured the generator (the bare route failed it too). A ping not answered within 10 s of its due time counts as an error, as `curl -m 10` (what cron jobs are told to use) would give up.',
    `Raw: ${rawCount.toLocaleString('en')} ping messages published by one connection with 256 acks outstanding (\`jetstream.publish\`), same subjects and size, at the start and again just before the endpoint's saturation run; the ratio is taken against the higher of the two.`,
    'The machine has two cores, shared with the load tool, nats-server, Postgres and whatever else runs: the share of the machine that was busy is given with each run, and latency goals are read against the bare route measured in the same run.',
    "Every 200 must be a stored ping: the PINGS stream's message count is compared with the 200s counted by the load tools.",
  );

  const startServer = async (mode: ServerArgs['mode']) => {
    const s = await startScript<ServerReady>(
      'parts/pings-server.ts',
      [JSON.stringify({ mode, databaseUrl: db.url, natsUrl, namespace } satisfies ServerArgs)],
      { timeoutMs: 60_000, label: mode },
    );
    ctx.cleanup(() => s.stop());
    return s;
  };
  const load = (url: string, connections: number, durationS: number, rate?: number) =>
    pacedLoad({ url, paths, connections, durationS, ...(rate ? { rate } : {}) });
  const saturate = async (server: Service<ServerReady>): Promise<{ result: LoadResult; cpu: Series['saturationCpu'] }> => {
    await waitIdle(server.ready.pid);
    const args: LoadArgs = { url: server.ready.url, paths, connections: 128, durationS: seconds.saturation };
    const cpu0 = processCpuUs(server.ready.pid);
    const m0 = machineCpuTicks();
    const result = wrk ? await wrkLoad(wrk, dir, args) : await pacedLoad(args);
    const m1 = machineCpuTicks();
    return {
      result,
      cpu: {
        server: (processCpuUs(server.ready.pid) - cpu0) / 1e6 / result.durationS,
        machine: (m1.busy - m0.busy) / (m1.total - m0.total),
      },
    };
  };
  let okTotal = 0;
  const series = async (mode: ServerArgs['mode']): Promise<Series> => {
    const server = await startServer(mode);
    const probe = await fetch(`${server.ready.url}${paths[0]}`);
    okTotal += probe.status === 200 ? 1 : 0;
    if (probe.status !== 200)
      throw new NotRun(`ping endpoint not built yet: GET /heartbeat/<id> of an existing heartbeat answered ${probe.status}`);
    okTotal += (await load(server.ready.url, 64, 1, 1_000)).ok;
    const byRate: Record<number, LoadResult> = {};
    const busy: Record<number, number> = {};
    const serverCpu: Record<number, number> = {};
    const loopDelay: Record<number, LoopDelay> = {};
    for (const rate of rates) {
      // A rate the server cannot keep up with leaves a backlog: the next run starts when it is done.
      await waitIdle(server.ready.pid);
      await server.request({ cmd: 'loop-delay-start' });
      const m0 = machineCpuTicks();
      const c0 = processCpuUs(server.ready.pid);
      const r = await load(server.ready.url, 200, seconds.rate, rate);
      const m1 = machineCpuTicks();
      loopDelay[rate] = await server.request<LoopDelay>({ cmd: 'loop-delay-stop' });
      busy[rate] = (m1.busy - m0.busy) / (m1.total - m0.total);
      serverCpu[rate] = (processCpuUs(server.ready.pid) - c0) / 1e6 / r.durationS;
      ctx.log(
        `${mode} at ${rate}/s: ${Math.round(r.rps)}/s, p50 ${r.p50} p99 ${r.p99} ms, ${r.errors} errors, machine ${round(busy[rate] * 100)}% busy, event loop late by up to ${loopDelay[rate].max} ms (p99 ${loopDelay[rate].p99})`,
      );
      okTotal += r.ok;
      byRate[rate] = r;
    }
    // The baseline again, as close as possible to the run it is compared with.
    if (mode === 'pings') rawRates.push(await rawPublish());
    const sat = await saturate(server);
    ctx.log(
      `${mode} saturated: ${Math.round(sat.result.rps)}/s, p99 ${round(sat.result.p99, 1)} ms, ${sat.result.errors} errors, server ${round(sat.cpu.server * 100)}% of a core, machine ${round(sat.cpu.machine * 100)}% busy`,
    );
    okTotal += sat.result.ok;
    let burst: LoadResult | undefined;
    let burstBusy: number | undefined;
    let burstServerCpu: number | undefined;
    if (mode === 'pings') {
      await waitIdle(server.ready.pid);
      const m0 = machineCpuTicks();
      const c0 = processCpuUs(server.ready.pid);
      burst = await load(server.ready.url, 512, seconds.burst, 50_000);
      const m1 = machineCpuTicks();
      burstBusy = (m1.busy - m0.busy) / (m1.total - m0.total);
      burstServerCpu = (processCpuUs(server.ready.pid) - c0) / 1e6 / burst.durationS;
      ctx.log(
        `burst: ${burst.requests} answered in time, ${burst.errors} errors, ${Math.round(burst.rps)}/s, p99 ${burst.p99} ms, machine ${round(burstBusy * 100)}% busy`,
      );
      okTotal += burst.ok;
    }
    if (mode === 'pings') {
      const stored = (await (await jetstreamManager(nc)).streams.info(names.streams.pings)).state.messages - rawAcked;
      // More stored than counted is expected: answers still on their way when a load tool stops are not counted.
      if (stored < okTotal)
        ctx.notes.push(
          `PINGS holds ${stored} pings from the endpoint but the load tools counted ${okTotal} answers of 200: some acknowledged pings are missing.`,
        );
      else
        ctx.notes.push(
          `Every ping answered 200 is in the PINGS stream (${stored.toLocaleString('en')} stored, ${okTotal.toLocaleString('en')} answers of 200 counted by the load tools; warm-ups and answers after a run's end are stored but not counted).`,
        );
    }
    await server.stop();
    return {
      rates: byRate,
      busy,
      serverCpu,
      loopDelay,
      saturation: sat.result,
      saturationCpu: sat.cpu,
      ...(burst ? { burst, burstBusy, burstServerCpu } : {}),
    };
  };

  const ceiling = await series('ceiling');
  okTotal = 0;
  const pings = await series('pings');
  const rawRate = Math.max(...rawRates);

  for (const rate of rates) {
    const p = pings.rates[rate]!;
    const c = ceiling.rates[rate]!;
    ctx.figures.push(
      {
        metric: `p50 at ${rate.toLocaleString('en')}/s`,
        value: p.p50,
        unit: 'ms',
        baseline: { label: 'Fastify route doing nothing', value: c.p50 },
        ratio: sig(p.p50 / c.p50),
      },
      {
        metric: `p99 at ${rate.toLocaleString('en')}/s (answered ${Math.round(p.rps).toLocaleString('en')}/s, ${p.errors} errors; machine ${round(pings.busy[rate]! * 100)}% busy, ${round(ceiling.busy[rate]! * 100)}% in the bare route's run)`,
        value: p.p99,
        unit: 'ms',
        baseline: { label: 'Fastify route doing nothing', value: c.p99 },
        ratio: sig(p.p99 / c.p99),
      },
    );
  }
  const sat = pings.saturation.rps;
  ctx.figures.push(
    {
      metric: 'Pings/s at saturation (JetStream ack awaited)',
      value: Math.round(sat),
      unit: 'pings/s',
      baseline: { label: 'Fastify route doing nothing', value: Math.round(ceiling.saturation.rps) },
      ratio: sig(sat / ceiling.saturation.rps),
    },
    {
      metric: 'Pings/s at saturation vs raw windowed publishing',
      value: Math.round(sat),
      unit: 'pings/s',
      baseline: {
        label: `raw JetStream publish, 256 acks outstanding (higher of ${rawRates.map((r) => Math.round(r).toLocaleString('en')).join(' and ')}/s)`,
        value: Math.round(rawRate),
      },
      ratio: sig(sat / rawRate),
    },
    {
      metric: 'p99 at saturation',
      value: round(pings.saturation.p99, 1),
      unit: 'ms',
      baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturation.p99, 1) },
      ratio: sig(pings.saturation.p99 / ceiling.saturation.p99),
    },
    {
      metric: 'Server process CPU at saturation (100% = one core)',
      value: round(pings.saturationCpu.server * 100, 1),
      unit: '%',
      baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturationCpu.server * 100, 1) },
    },
    {
      metric: 'Whole machine busy at saturation (all cores)',
      value: round(pings.saturationCpu.machine * 100, 1),
      unit: '%',
      baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturationCpu.machine * 100, 1) },
    },
    {
      metric: `10x burst (${(50_000 * seconds.burst).toLocaleString('en')} pings offered at 50,000/s): answered per second`,
      value: Math.round(pings.burst!.rps),
      unit: 'pings/s',
    },
    {
      metric: `10x burst: p99 from due time to answer (machine ${round(pings.burstBusy! * 100)}% busy)`,
      value: round(pings.burst!.p99, 1),
      unit: 'ms',
    },
  );
  const p5k = pings.rates[5_000]!;
  const rateMet = sat >= goalRate;
  const p99Met = p5k.p99 <= goalP99Ms && p5k.errors === 0;
  const shareMet = sat / rawRate >= goalShareOfRaw;
  const burstMet = pings.burst!.errors === 0;
  ctx.goals.push(
    {
      goal: `At least ${goalRate.toLocaleString('en')} pings/s`,
      actual: `${Math.round(sat).toLocaleString('en')} pings/s`,
      met: rateMet,
      ...(rateMet ? {} : { shortfall: `${Math.round((1 - sat / goalRate) * 100)}% short` }),
    },
    {
      goal: `p99 at most ${goalP99Ms} ms at 5,000 pings/s`,
      actual: `${p5k.p99} ms (${Math.round(p5k.rps).toLocaleString('en')}/s answered, ${p5k.errors} errors)`,
      met: p99Met,
      ...(p99Met ? {} : { shortfall: p5k.p99 > goalP99Ms ? `${round(p5k.p99 - goalP99Ms, 1)} ms over` : `${p5k.errors} errors` }),
    },
    {
      goal: `At least ${goalShareOfRaw * 100}% of the raw publish rate`,
      actual: `${Math.round((100 * sat) / rawRate)}% (${Math.round(sat).toLocaleString('en')} of ${Math.round(rawRate).toLocaleString('en')}/s)`,
      met: shareMet,
      ...(shareMet ? {} : { shortfall: `${Math.round(goalShareOfRaw * 100 - (100 * sat) / rawRate)} points short` }),
    },
    {
      goal: 'No error in a 10x burst',
      actual: `${pings.burst!.errors.toLocaleString('en')} errors of ${(pings.burst!.requests + pings.burst!.unanswered).toLocaleString('en')} pings (${pings.burst!.unanswered.toLocaleString('en')} not answered within 10 s)`,
      met: burstMet,
      ...(burstMet
        ? {}
        : {
            shortfall: `${round((100 * pings.burst!.errors) / (pings.burst!.requests + pings.burst!.unanswered), 1)}% of the burst failed`,
          }),
    },
  );
  if (!p99Met) {
    ctx.limits.push({
      title: `p99 at 5,000 pings/s: ${p5k.p99} ms`,
      text: `In that run the server process used ${round(pings.serverCpu[5_000]! * 100)}% of one core (it was not saturated: it takes ${Math.round(sat).toLocaleString('en')}/s) and the whole machine was ${round(pings.busy[5_000]! * 100)}% busy; the bare route, measured the same way, had a p99 of ${ceiling.rates[5_000]!.p99} ms with the machine ${round(ceiling.busy[5_000]! * 100)}% busy. The server's event loop ran its timers up to ${pings.loopDelay[5_000]!.max} ms late (p99 ${pings.loopDelay[5_000]!.p99} ms; the bare route's: ${ceiling.loopDelay[5_000]!.max} ms, p99 ${ceiling.loopDelay[5_000]!.p99} ms). A ping waits on three processes in turn (the server, Postgres for the id, nats-server for the ack), each of which must get a core: on a machine with no idle core the slowest 1% are the pings that waited for one.`,
    });
  }
  if (!burstMet) {
    const b = pings.burst!;
    ctx.limits.push({
      title: `the 10x burst: ${b.errors.toLocaleString('en')} of ${(b.requests + b.unanswered).toLocaleString('en')} pings failed (${b.unanswered.toLocaleString('en')} not answered within 10 s)`,
      text: `Every ping answered within 10 s of its due time (the last is due at ${seconds.burst} s) takes ${Math.round((50_000 * seconds.burst) / (seconds.burst + 10)).toLocaleString('en')} answers a second from the start. The server answered ${Math.round(b.rps).toLocaleString('en')}/s, using ${round(pings.burstServerCpu! * 100)}% of one core while the whole machine was ${round(pings.burstBusy! * 100)}% busy${pings.burstServerCpu! < 0.9 ? ': it did not get a core of its own' : ''}. Server CPU per ping: ${Math.round((pings.burstServerCpu! * b.durationS * 1e6) / (b.requests + b.unanswered))} µs in the burst (512 connections, each with a ping in flight), ${Math.round((pings.saturationCpu.server * 1e6) / sat)} µs at saturation (128 connections).`,
    });
  }
  if (!ctx.quick && (!rateMet || !p99Met || !shareMet || !burstMet)) {
    const server = await startServer('pings');
    await load(server.ready.url, 64, 2, 1_000);
    await server.request({ cmd: 'profile-start' });
    const { result, cpu } = await saturate(server);
    const profile = await server.request<ProfileSummary>({ cmd: 'profile-stop', name: 'pings-endpoint' });
    await server.stop();
    ctx.limits.push({
      title: `the ping endpoint at ${Math.round(result.rps).toLocaleString('en')} pings/s (profiled saturation run)`,
      text: `The server process used ${round(cpu.server * 100)}% of one core; the whole machine (load tool, nats-server, Postgres, the server and anything else running) was ${round(cpu.machine * 100)}% busy. The server's CPU profile:`,
      profile,
    });
  }
});
