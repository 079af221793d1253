/**
 * The server under load, in a process of its own: the control plane's API app (buildApp, whose
 * /heartbeat/<id> route is the ping endpoint) or the ceiling, a Fastify route that only says OK.
 * Answers `profile-start` / `profile-stop` so a missed goal can be profiled where the work is done.
 */
import { randomBytes } from 'node:crypto'
import { connect } from '@nats-io/transport-node'
import Fastify from 'fastify'
import { buildApp } from '../../control-plane/src/app.ts'
import { createSql } from '../../control-plane/src/db/sql.ts'
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts'
import { loadConfig } from '../../shared/src/config.ts'
import { connectNats } from '../../shared/src/nats.ts'
import { answer } from '../lib/child.ts'
import { benchLog } from '../lib/infra.ts'
import { startProfiling, type ProfileSummary } from '../lib/profile.ts'

export type ServerArgs = {
  mode: 'ceiling' | 'pings'
  databaseUrl?: string
  natsUrl?: string
  namespace?: string
  /** The variant: nats.js told not to capture a stack for every request (`noAsyncTraces`). */
  noAsyncTraces?: boolean
}
export type ServerReady = { url: string; pid: number }

const args = JSON.parse(process.argv[2]!) as ServerArgs
let close: () => Promise<void>
let url: string
if (args.mode === 'ceiling') {
  const app = Fastify({ logger: false })
  app.get('/heartbeat/:id', async (_req, reply) => reply.header('content-type', 'text/plain; charset=utf-8').send('OK'))
  url = await app.listen({ port: 0, host: '127.0.0.1' })
  close = () => app.close()
} else {
  const config = loadConfig({
    DATABASE_URL: args.databaseUrl,
    NATS_URL: args.natsUrl,
    NATS_NAMESPACE: args.namespace,
    SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  })
  const sql = createSql(args.databaseUrl!, { log: benchLog, max: config.PG_POOL_SIZE })
  // As shared/src/nats.ts connectNats connects, plus the variant's one option.
  const nc = args.noAsyncTraces
    ? await connect({ servers: args.natsUrl!, name: 'bench-pings', maxReconnectAttempts: -1, reconnectTimeWait: 500, waitOnFirstConnect: true, timeout: 5_000, noAsyncTraces: true })
    : await connectNats({ servers: args.natsUrl!, name: 'bench-pings', log: benchLog })
  const app = await buildApp({ config, sql, nc, log: benchLog, keys: deriveKeys(randomBytes(32)) })
  url = await app.listen({ port: 0, host: '127.0.0.1' })
  close = async () => {
    await app.close()
    await sql.end({ timeout: 5 })
    await nc.close()
  }
}

let stopProfiling: ((name: string) => Promise<ProfileSummary>) | undefined
process.on('message', (m: { cmd: 'profile-start' } | { cmd: 'profile-stop'; name: string }) => {
  void (async () => {
    if (m.cmd === 'profile-start') {
      stopProfiling = await startProfiling(500)
      await answer({ started: true })
    } else {
      await answer(await stopProfiling!(m.name))
    }
  })()
})
process.once('SIGTERM', () => void close().finally(() => process.exit(0)))
await answer({ url, pid: process.pid } satisfies ServerReady)
