import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../control-plane/src/platform/embedded/postgres.ts';
import { quietLog } from '../harness/db.ts';

/**
 * A Postgres server this suite owns: the embedded one the product ships, in a temporary data
 * directory on a port of its own, so a test can stop it and start it again. The machine's own
 * Postgres is never touched.
 */
export interface OwnedPostgres {
  port: number;
  /** URL of a database made for the test. */
  databaseUrl: string;
  running(): boolean;
  /** A fast shutdown (SIGINT to the postmaster): clients are disconnected. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
}

/** Stops the server and removes its data if the test process ends without closing it. */
function cleanUpAtExit(dir: string): () => void {
  const atExit = () => {
    const pid = runningPostmasterPid(join(dir, 'postgres'));
    if (pid !== undefined) process.kill(pid, 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', atExit);
  return () => process.off('exit', atExit);
}

function runningPostmasterPid(pgDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function startOwnedPostgres(): Promise<OwnedPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'uptime-reliability-pg-'));
  const forget = cleanUpAtExit(dir);
  // As root, the server runs as `postgres`, which must be able to enter the directory.
  chmodSync(dir, 0o711);
  let handle: EmbeddedPostgresHandle | undefined;
  const open = async () => {
    handle = await startEmbeddedPostgres({ dataDir: dir, log: quietLog, database: 'postgres' });
    if (!handle.owned) throw new Error('another Postgres already serves this data directory');
    return handle;
  };
  try {
    const first = await open();
    const port = Number(new URL(first.adminUrl).port);
    if (port === 5432) throw new Error('refusing to manage a Postgres on port 5432');
    const admin = postgres(first.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe('create database uptime_reliability');
    await admin.end();
    const url = new URL(first.adminUrl);
    url.pathname = '/uptime_reliability';
    return {
      port,
      databaseUrl: url.toString(),
      running: () => handle !== undefined,
      async stop() {
        const h = handle;
        handle = undefined;
        await h?.stop();
      },
      async start() {
        if (handle) return;
        const h = await open();
        const again = Number(new URL(h.adminUrl).port);
        if (again !== port) throw new Error(`Postgres came back on port ${again}, not ${port}`);
      },
      async close() {
        const h = handle;
        handle = undefined;
        await h?.stop();
        rmSync(dir, { recursive: true, force: true });
        forget();
      },
    };
  } catch (err) {
    await handle?.stop();
    rmSync(dir, { recursive: true, force: true });
    forget();
    throw err;
  }
}
