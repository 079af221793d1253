/**
 * The server under load, in a process of its own: the control plane's API app (buildApp, whose
 * /heartbeat/<id> route is the ping endpoint) or the ceiling, a Fastify route that only says OK.
 * Answers `profile-start` / `profile-stop` so a missed goal can be profiled where the work is done,
 * and `loop-delay-start` / `loop-delay-stop` with how late its event loop ran during a run.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { buildApp } from '../../control-plane/src/runtime/app.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { connectNats } from '../../shared/src/nats.ts';
import { answer } from '../lib/child.ts';
import { benchLog } from '../lib/infra.ts';
import { startProfiling, type ProfileSummary } from '../lib/profile.ts';

export type ServerArgs = {
  mode: 'ceiling' | 'pings';
  databaseUrl?: string;
  natsUrl?: string;
  namespace?: string;
};
export type ServerReady = { url: string; pid: number };
/** How late the server's event loop was, in ms. */
export type LoopDelay = { p99: number; max: number };

const args = JSON.parse(process.argv[2]!) as ServerArgs;
let close: () => Promise<void>;
let url: string;
if (args.mode === 'ceiling') {
  const app = Fastify({ logger: false });
  app.get('/heartbeat/:id', async (_req, reply) => reply.header('content-type', 'text/plain; charset=utf-8').send('OK'));
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  close = () => app.close();
} else {
  const config = loadConfig({
    DATABASE_URL: args.databaseUrl,
    NATS_URL: args.natsUrl,
    NATS_NAMESPACE: args.namespace,
    SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    // The load pings each of 1,000 heartbeats up to tens of times a second: the per-heartbeat
    // limit is set out of reach, so it is measured (its bucket taken per ping) but never refuses.
    PING_RATE_LIMIT: '1000000000',
  });
  const sql = createSql(args.databaseUrl!, { log: benchLog, max: config.PG_POOL_SIZE });
  const nc = await connectNats({ servers: args.natsUrl!, name: 'bench-pings', log: benchLog });
  const app = await buildApp({ config, sql, nc, log: benchLog, keys: deriveKeys(randomBytes(32)) });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  close = async () => {
    await app.close();
    await sql.end({ timeout: 5 });
    await nc.close();
  };
}

let stopProfiling: ((name: string) => Promise<ProfileSummary>) | undefined;
// How late the event loop ran its timers: a process that waits for a core (or collects garbage) shows it here.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
process.on(
  'message',
  (m: { cmd: 'profile-start' } | { cmd: 'profile-stop'; name: string } | { cmd: 'loop-delay-start' } | { cmd: 'loop-delay-stop' }) => {
    void (async () => {
      if (m.cmd === 'profile-start') {
        stopProfiling = await startProfiling(500);
        await answer({ started: true });
      } else if (m.cmd === 'profile-stop') {
        await answer(await stopProfiling!(m.name));
      } else if (m.cmd === 'loop-delay-start') {
        loopDelay.reset();
        loopDelay.enable();
        await answer({ started: true });
      } else {
        loopDelay.disable();
        const ms = (ns: number) => Math.round(ns / 1e4) / 100;
        await answer({ p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) } satisfies LoopDelay);
      }
    })();
  },
);
process.once('SIGTERM', () => void close().finally(() => process.exit(0)));
await answer({ url, pid: process.pid } satisfies ServerReady);
