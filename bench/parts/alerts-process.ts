/**
 * A control-plane process of the alerts part: `startControlPlane` with the given roles, its
 * settings read from the environment by `loadConfig`, its pool sized by PG_POOL_SIZE and its logs
 * at info, as `uptime control-plane --roles ...` runs it (control-plane/src/cli/serve.ts). The
 * logs go to a file (the part counts the errors in it) instead of a terminal.
 * Besides, over IPC: `stats` answers its CPU time and the statements its pool sent, by statement
 * (the first words of each; begin and commit included, the listening connection's aside);
 * `profile-start` and `profile-stop` take a V8 CPU profile of the measured window.
 */
import { createWriteStream } from 'node:fs';
import { loadConfig } from '../../shared/src/config.ts';
import { createLogger } from '../../shared/src/logger.ts';
import { connectNats } from '../../shared/src/nats.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { startControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import type { Role } from '../../control-plane/src/runtime/roles.ts';
import { answer } from '../lib/child.ts';
import { createExplainingSql, type StatementCost } from '../lib/explain.ts';
import { startProfiling, type ProfileSummary } from '../lib/profile.ts';

export type ProcessArgs = { roles: Role[]; app: string; logFile: string };
export type ProcessStats = { cpuUs: number; statements: Record<string, number>; explained?: StatementCost[] };
export type ProcessMessage = { op: 'stats' } | { op: 'profile-start' } | { op: 'profile-stop'; name: string };
export type { ProfileSummary };

const args = JSON.parse(process.argv[2]!) as ProcessArgs;
const config = loadConfig(process.env);
const logStream = createWriteStream(args.logFile, { flags: 'a' });
const log = createLogger({ level: process.env.LOG_LEVEL ?? 'info', destination: logStream, pretty: false });
// BENCH_EXPLAIN=1: every statement explained by auto_explain (lib/explain.ts), for the time
// Postgres spends on each; it slows them, so the figures of such a run are not the measure.
const explaining = process.env.BENCH_EXPLAIN === '1' ? createExplainingSql(config.DATABASE_URL!, config.PG_POOL_SIZE, args.app) : undefined;
const sql = explaining?.sql ?? createSql(config.DATABASE_URL!, { log, max: config.PG_POOL_SIZE, applicationName: args.app });

const statements = new Map<string, number>();
// postgres.js calls options.debug for every statement a pool connection sends.
sql.options.debug = (_conn: number, query: string) => {
  const key = query.slice(0, 200).replace(/\s+/g, ' ').trim().slice(0, 90);
  statements.set(key, (statements.get(key) ?? 0) + 1);
};

const nc = await connectNats({ servers: config.NATS_URL!, name: args.app, log });
// Experiments only: another number of sends in flight than the role's default.
const concurrency = process.env.BENCH_NOTIFY_CONCURRENCY ? Number(process.env.BENCH_NOTIFY_CONCURRENCY) : undefined;
const cp = await startControlPlane({
  config,
  log,
  sql,
  nc,
  roles: args.roles,
  port: 0,
  ...(concurrency ? { notify: { concurrency } } : {}),
});

let stopProfiling: ((name: string) => Promise<ProfileSummary>) | undefined;
process.on('message', (m: ProcessMessage) => {
  void (async () => {
    if (m.op === 'stats') {
      const u = process.cpuUsage();
      await answer({
        cpuUs: u.user + u.system,
        statements: Object.fromEntries(statements),
        ...(explaining ? { explained: explaining.statements() } : {}),
      } satisfies ProcessStats);
    } else if (m.op === 'profile-start') {
      stopProfiling = await startProfiling(1_000);
      await answer({ ok: true });
    } else if (m.op === 'profile-stop') {
      const summary = await stopProfiling?.(m.name);
      stopProfiling = undefined;
      await answer(summary ?? null);
    }
  })();
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await cp.stop();
    await sql.end({ timeout: 5 });
    await nc.close();
    logStream.end(() => process.exit(0));
  })();
});

await answer({ pid: process.pid });
