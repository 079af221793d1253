/**
 * Part 3, ping ingestion: pings/s acknowledged by JetStream through the ping endpoint at fixed
 * rates and at saturation, against a Fastify route that does nothing (the ceiling) and raw
 * windowed JetStream publishing.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { createUser } from '../../control-plane/src/accounts/service.ts'
import { pingPartition } from '../../shared/src/pings/partition.ts'
import { ensureStreams } from '../../shared/src/provision.ts'
import { startScript, type Service } from '../lib/child.ts'
import { benchDatabase, benchNats, natsServer, postgresServer } from '../lib/infra.ts'
import { findWrk, pacedLoad, wrkLoad, wrkVersion, type LoadArgs, type LoadResult } from '../lib/load.ts'
import { NotRun, runPart } from '../lib/part.ts'
import { machineCpuTicks, processCpuUs, waitIdle } from '../lib/proc.ts'
import type { ProfileSummary } from '../lib/profile.ts'
import { publishWindowed } from '../lib/publish.ts'
import { round, sig } from '../lib/stats.ts'
import type { ServerArgs, ServerReady } from './pings-server.ts'

const rates = [1_000, 5_000, 10_000]
const goalRate = 10_000
const goalP99Ms = 25
const goalShareOfRaw = 0.4
const partitions = 16

type Series = { rates: Record<number, LoadResult>; saturation: LoadResult; saturationCpu: { server: number; machine: number }; burst?: LoadResult }

await runPart('pings', 'Ping ingestion', async (ctx) => {
  const q = ctx.quick
  const seconds = q ? { rate: 2, saturation: 3, burst: 1 } : { rate: 5, saturation: 10, burst: 2 }
  const adminUrl = await postgresServer(ctx)
  const natsUrl = await natsServer(ctx)
  const db = await benchDatabase(ctx, adminUrl)
  const { nc, names, namespace } = await benchNats(ctx, natsUrl)
  await ensureStreams(nc, names, { replicas: 1 })
  const dir = mkdtempSync(join(tmpdir(), 'uptime-bench-pings-'))
  ctx.cleanup(() => rmSync(dir, { recursive: true, force: true }))

  const user = await createUser(db.sql, { email: 'pings@bench.test', password: 'a long bench password' })
  const ids = ((await db.sql`
    insert into heartbeats (project_id, name, grace_period, period)
    select ${user.project_id}, 'job ' || g, 300, 3600 from generate_series(1, 1000) g
    returning id`) as unknown as { id: string }[]).map((r) => r.id)
  const paths = ids.map((id) => `/heartbeat/${id}`)
  const wrk = findWrk()
  if (wrk) ctx.versions['wrk'] = wrkVersion(wrk)
  else ctx.notes.push('wrk is missing (apt-get install wrk): saturation was driven by the bench\'s own generator, which needs more CPU per request.')

  // The floor of what the endpoint adds to: JetStream acks alone, a window of them outstanding.
  const rawCount = q ? 20_000 : 100_000
  const raw = await publishWindowed(nc, rawCount, (i) => {
    const id = ids[i % ids.length]!
    const ping = { id: randomUUID(), heartbeat_id: id, kind: 'success', exit_code: null, received_at: new Date().toISOString(), region: null, method: 'GET', source: '127.0.0.1', user_agent: 'bench', body: '', body_size: 0 }
    return { subject: names.subjects.ping(pingPartition(id, partitions), id), payload: JSON.stringify(ping), msgId: ping.id }
  }, 256)
  const rawRate = (raw.acked * 1000) / raw.wallMs
  ctx.log(`raw windowed publish: ${Math.round(rawRate)}/s`)

  ctx.method.push(
    `Servers in a process of their own on 127.0.0.1: the control plane's app (\`buildApp\`; its /heartbeat/<id> checks the id in Postgres, publishes the ping to PINGS and answers 200 once JetStream acknowledged it) and the ceiling, a bare Fastify route answering "OK". ${ids.length.toLocaleString('en')} heartbeats, pinged in turn with GET.`,
    `Fixed rates ${rates.map((r) => r.toLocaleString('en')).join(', ')}/s for ${seconds.rate} s each (bench/parts/pings-load.ts in its own process: open loop, 200 connections, latency counted from each request's due time as wrk2 does, after 1 s of warm-up that is not counted); saturation for ${seconds.saturation} s with ${wrk ? 'wrk (-t2 -c128)' : 'the same generator, closed loop (128 connections)'}; burst: 10 × 5,000/s offered for ${seconds.burst} s on 512 connections, answers awaited up to 30 s; a ping not answered within 10 s counts as an error (\`curl -m 10\`, as cron jobs are told to ping).`,
    `Raw: ${rawCount.toLocaleString('en')} ping messages published by one connection with 256 acks outstanding (\`jetstream.publish\`), same subjects and size.`,
    'Every 200 must be a stored ping: the PINGS stream\'s message count is compared with the 200s counted by the load tools.',
  )

  const startServer = async (mode: ServerArgs['mode'], noAsyncTraces = false) => {
    const s = await startScript<ServerReady>('parts/pings-server.ts', [JSON.stringify({ mode, databaseUrl: db.url, natsUrl, namespace, noAsyncTraces } satisfies ServerArgs)], { timeoutMs: 60_000, label: mode })
    ctx.cleanup(() => s.stop())
    return s
  }
  const load = (url: string, connections: number, durationS: number, rate?: number) => pacedLoad({ url, paths, connections, durationS, ...(rate ? { rate } : {}) })
  const saturate = async (server: Service<ServerReady>): Promise<{ result: LoadResult; cpu: Series['saturationCpu'] }> => {
    await waitIdle(server.ready.pid)
    const args: LoadArgs = { url: server.ready.url, paths, connections: 128, durationS: seconds.saturation }
    const cpu0 = processCpuUs(server.ready.pid)
    const m0 = machineCpuTicks()
    const result = wrk ? await wrkLoad(wrk, dir, args) : await pacedLoad(args)
    const m1 = machineCpuTicks()
    return { result, cpu: { server: (processCpuUs(server.ready.pid) - cpu0) / 1e6 / result.durationS, machine: (m1.busy - m0.busy) / (m1.total - m0.total) } }
  }
  let okTotal = 0
  const series = async (mode: ServerArgs['mode']): Promise<Series> => {
    const server = await startServer(mode)
    const probe = await fetch(`${server.ready.url}${paths[0]}`)
    okTotal += probe.status === 200 ? 1 : 0
    if (probe.status !== 200) throw new NotRun(`ping endpoint not built yet: GET /heartbeat/<id> of an existing heartbeat answered ${probe.status}`)
    okTotal += (await load(server.ready.url, 64, 1, 1_000)).ok
    const byRate: Record<number, LoadResult> = {}
    for (const rate of rates) {
      // A rate the server cannot keep up with leaves a backlog: the next run starts when it is done.
      await waitIdle(server.ready.pid)
      const r = await load(server.ready.url, 200, seconds.rate, rate)
      ctx.log(`${mode} at ${rate}/s: ${Math.round(r.rps)}/s, p50 ${r.p50} p99 ${r.p99} ms, ${r.errors} errors`)
      okTotal += r.ok
      byRate[rate] = r
    }
    const sat = await saturate(server)
    ctx.log(`${mode} saturated: ${Math.round(sat.result.rps)}/s, p99 ${round(sat.result.p99, 1)} ms, ${sat.result.errors} errors, server ${round(sat.cpu.server * 100)}% of a core, machine ${round(sat.cpu.machine * 100)}% busy`)
    okTotal += sat.result.ok
    let burst: LoadResult | undefined
    if (mode === 'pings') {
      await waitIdle(server.ready.pid)
      burst = await load(server.ready.url, 512, seconds.burst, 50_000)
      ctx.log(`burst: ${burst.requests} requests, ${burst.errors} errors, p99 ${burst.p99} ms`)
      okTotal += burst.ok
    }
    if (mode === 'pings') {
      const stored = (await (await jetstreamManager(nc)).streams.info(names.streams.pings)).state.messages - raw.acked
      // More stored than counted is expected: answers still on their way when a load tool stops are not counted.
      if (stored < okTotal) ctx.notes.push(`PINGS holds ${stored} pings from the endpoint but the load tools counted ${okTotal} answers of 200: some acknowledged pings are missing.`)
      else ctx.notes.push(`Every ping answered 200 is in the PINGS stream (${stored.toLocaleString('en')} stored, ${okTotal.toLocaleString('en')} answers of 200 counted by the load tools; warm-ups and answers after a run's end are stored but not counted).`)
    }
    await server.stop()
    return { rates: byRate, saturation: sat.result, saturationCpu: sat.cpu, ...(burst ? { burst } : {}) }
  }

  const ceiling = await series('ceiling')
  okTotal = 0
  const pings = await series('pings')

  for (const rate of rates) {
    const p = pings.rates[rate]!
    const c = ceiling.rates[rate]!
    ctx.figures.push(
      { metric: `p50 at ${rate.toLocaleString('en')}/s`, value: p.p50, unit: 'ms', baseline: { label: 'Fastify route doing nothing', value: c.p50 }, ratio: sig(p.p50 / c.p50) },
      { metric: `p99 at ${rate.toLocaleString('en')}/s (answered ${Math.round(p.rps).toLocaleString('en')}/s, ${p.errors} errors)`, value: p.p99, unit: 'ms', baseline: { label: 'Fastify route doing nothing', value: c.p99 }, ratio: sig(p.p99 / c.p99) },
    )
  }
  const sat = pings.saturation.rps
  ctx.figures.push(
    { metric: 'Pings/s at saturation (JetStream ack awaited)', value: Math.round(sat), unit: 'pings/s', baseline: { label: 'Fastify route doing nothing', value: Math.round(ceiling.saturation.rps) }, ratio: sig(sat / ceiling.saturation.rps) },
    { metric: 'Pings/s at saturation vs raw windowed publishing', value: Math.round(sat), unit: 'pings/s', baseline: { label: 'raw JetStream publish, 256 acks outstanding', value: Math.round(rawRate) }, ratio: sig(sat / rawRate) },
    { metric: 'p99 at saturation', value: round(pings.saturation.p99, 1), unit: 'ms', baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturation.p99, 1) }, ratio: sig(pings.saturation.p99 / ceiling.saturation.p99) },
    { metric: 'Server process CPU at saturation (100% = one core)', value: round(pings.saturationCpu.server * 100, 1), unit: '%', baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturationCpu.server * 100, 1) } },
    { metric: 'Whole machine busy at saturation (all cores)', value: round(pings.saturationCpu.machine * 100, 1), unit: '%', baseline: { label: 'Fastify route doing nothing', value: round(ceiling.saturationCpu.machine * 100, 1) } },
    { metric: `10x burst (${(50_000 * seconds.burst).toLocaleString('en')} pings offered at 50,000/s): answered per second`, value: Math.round(pings.burst!.rps), unit: 'pings/s' },
    { metric: '10x burst: p99 from due time to answer', value: round(pings.burst!.p99, 1), unit: 'ms' },
  )
  const p5k = pings.rates[5_000]!
  const rateMet = sat >= goalRate
  const p99Met = p5k.p99 <= goalP99Ms && p5k.errors === 0
  const shareMet = sat / rawRate >= goalShareOfRaw
  const burstMet = pings.burst!.errors === 0
  ctx.goals.push(
    { goal: `At least ${goalRate.toLocaleString('en')} pings/s`, actual: `${Math.round(sat).toLocaleString('en')} pings/s`, met: rateMet, ...(rateMet ? {} : { shortfall: `${Math.round((1 - sat / goalRate) * 100)}% short` }) },
    { goal: `p99 at most ${goalP99Ms} ms at 5,000 pings/s`, actual: `${p5k.p99} ms (${Math.round(p5k.rps).toLocaleString('en')}/s answered, ${p5k.errors} errors)`, met: p99Met, ...(p99Met ? {} : { shortfall: p5k.p99 > goalP99Ms ? `${round(p5k.p99 - goalP99Ms, 1)} ms over` : `${p5k.errors} errors` }) },
    { goal: `At least ${goalShareOfRaw * 100}% of the raw publish rate`, actual: `${Math.round((100 * sat) / rawRate)}% (${Math.round(sat).toLocaleString('en')} of ${Math.round(rawRate).toLocaleString('en')}/s)`, met: shareMet, ...(shareMet ? {} : { shortfall: `${Math.round(goalShareOfRaw * 100 - (100 * sat) / rawRate)} points short` }) },
    {
      goal: 'No error in a 10x burst',
      actual: `${pings.burst!.errors.toLocaleString('en')} errors of ${(pings.burst!.requests + pings.burst!.unanswered).toLocaleString('en')} pings (${pings.burst!.unanswered.toLocaleString('en')} not answered within 10 s)`,
      met: burstMet,
      ...(burstMet ? {} : { shortfall: `${round((100 * pings.burst!.errors) / (pings.burst!.requests + pings.burst!.unanswered), 1)}% of the burst failed` }),
    },
  )
  if (!ctx.quick) {
    // What the endpoint would do if nats.js did not build two Error objects per publish, each
    // variant in a fresh server, back to back.
    const runs: Record<'shipped' | 'variant', number> = { shipped: 0, variant: 0 }
    for (const variant of [false, true]) {
      const server = await startServer('pings', variant)
      await load(server.ready.url, 64, 1, 1_000)
      runs[variant ? 'variant' : 'shipped'] = (await saturate(server)).result.rps
      await server.stop()
    }
    ctx.figures.push({ metric: 'Pings/s at saturation with nats.js `noAsyncTraces: true` (not set in shared/src/nats.ts)', value: Math.round(runs.variant), unit: 'pings/s', baseline: { label: 'as shipped, run just before', value: Math.round(runs.shipped) }, ratio: sig(runs.variant / runs.shipped) })
  }
  if (!ctx.quick && (!rateMet || !p99Met || !shareMet)) {
    const server = await startServer('pings')
    await load(server.ready.url, 64, 2, 1_000)
    await server.request({ cmd: 'profile-start' })
    const { result, cpu } = await saturate(server)
    const profile = await server.request<ProfileSummary>({ cmd: 'profile-stop', name: 'pings-endpoint' })
    await server.stop()
    ctx.limits.push({
      title: `the ping endpoint at ${Math.round(result.rps).toLocaleString('en')} pings/s (profiled saturation run)`,
      text: `The server process used ${round(cpu.server * 100)}% of one core; the whole machine (load tool, nats-server, Postgres, the server and anything else running) was ${round(cpu.machine * 100)}% busy. The server's CPU profile:`,
      profile,
    })
  }
})
