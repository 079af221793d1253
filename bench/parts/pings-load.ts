/**
 * An open-loop load generator in a process of its own: request i is due at start + i / rate and
 * its latency counts from then (as wrk2 does), so a slow server cannot slow the clock that
 * measures it. Without a rate, each connection sends its next request when its answer arrives.
 */
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { answer } from '../lib/child.ts'
import type { LoadArgs, LoadResult } from '../lib/load.ts'
import { createSamples, round, summarize } from '../lib/stats.ts'

const args = JSON.parse(process.argv[2]!) as LoadArgs
const pool = new Pool(args.url, { connections: args.connections, keepAliveTimeout: 60_000 })
const latencies = createSamples(1 << 16)
let pathIndex = 0
let sent = 0
let ok = 0
let refused = 0
let failed = 0
const durationMs = args.durationS * 1000

// The first second opens connections and warms both sides up; it is sent but not counted.
const warmupMs = 1_000
let counting = false
let countingSince = 0
let lastAnswer = 0
const send = async (dueAt: number) => {
  const counted = counting
  if (counted) sent++
  const path = args.paths[pathIndex++ % args.paths.length]!
  let status = 0
  try {
    const { statusCode, body } = await pool.request({ method: 'GET', path, headersTimeout: 10_000, bodyTimeout: 10_000 })
    await body.dump()
    status = statusCode
  } catch {
    status = 0
  }
  if (!counted) return
  lastAnswer = performance.now()
  if (status === 200) ok++
  else if (status === 0) failed++
  else refused++
  latencies.push(performance.now() - dueAt)
}

let t0 = performance.now()
const inFlight = new Set<Promise<void>>()
const track = (p: Promise<void>) => {
  inFlight.add(p)
  void p.finally(() => inFlight.delete(p))
}
if (args.rate) {
  const interval = 1000 / args.rate
  const warmup = Math.floor((args.rate * warmupMs) / 1000)
  const total = warmup + Math.floor(args.rate * args.durationS)
  let next = 0
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now()
      while (next < total && t0 + next * interval <= now) {
        if (next === warmup) {
          counting = true
          countingSince = performance.now()
        }
        track(send(t0 + next++ * interval))
      }
      if (next >= total) return resolve()
      setTimeout(tick, Math.max(0, Math.min(1, t0 + next * interval - performance.now())))
    }
    tick()
  })
} else {
  const warm = async () => {
    while (performance.now() - t0 < warmupMs) await send(performance.now())
  }
  await Promise.all(Array.from({ length: args.connections }, warm))
  counting = true
  t0 = countingSince = performance.now()
  const loop = async () => {
    while (performance.now() - t0 < durationMs) await send(performance.now())
  }
  await Promise.all(Array.from({ length: args.connections }, loop))
}
await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 30_000))])
const elapsedMs = performance.now() - t0
await pool.destroy()
const s = summarize(latencies.values())
const result: LoadResult = {
  tool: 'bench generator',
  requests: ok + refused,
  ok,
  // Sent but never answered (by the end of the wait) counts as failed too.
  errors: refused + failed + (sent - ok - refused - failed),
  unanswered: failed + (sent - ok - refused - failed),
  // Answers over the time from the first counted request to the last answer, queueing included.
  rps: (ok + refused) / (Math.max(lastAnswer - countingSince, durationMs) / 1000),
  p50: round(s.p50, 2),
  p99: round(s.p99, 2),
  max: round(s.max, 2),
  durationS: elapsedMs / 1000,
}
await answer(result)
process.exit(0)
