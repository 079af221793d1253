import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import type { Logger } from '../../../../shared/src/logger.ts';
import { freePort, pidAlive, portIsFree } from './ports.ts';
import { binariesFor, packagedBinaries } from './postgres-binaries.ts';
import { canEnter, outsideBase, outsideDir, placeCluster, postgresUser, type PostgresUser } from './postgres-dir.ts';
import { initCluster, startPostmaster } from './postgres-process.ts';

export const EMBEDDED_DATABASE = 'uptime';

interface Meta {
  user: string;
  password: string;
  port: number;
  /** The cluster's directory: DATA_DIR/postgres, or outside DATA_DIR when root's DATA_DIR is closed to the postgres user. */
  dir?: string;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of the `uptime` database. */
  url: string;
  /** URL of the maintenance database, for creating more databases (tests). */
  adminUrl: string;
  /** False when another process (a running `npm start`) owns the server. */
  owned: boolean;
  /** Where the cluster keeps its data. */
  dir: string;
  stop(): Promise<void>;
}

const urlFor = (m: Meta, db: string) => `postgres://${m.user}:${encodeURIComponent(m.password)}@127.0.0.1:${m.port}/${db}`;

function readMeta(file: string): Meta | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Meta;
}

const writeMeta = (file: string, meta: Meta) => writeFileSync(file, JSON.stringify(meta), { mode: 0o600 });

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
 * Starts (or joins) the embedded Postgres of `dataDir`. Credentials, the port and the cluster's
 * directory live in `<dataDir>/postgres.json`, so a restart, the CLI and a second process find
 * the same server. The cluster is `<dataDir>/postgres`, unless root runs it and the `postgres`
 * user it runs as cannot enter DATA_DIR (a checkout under /root): then it lives under
 * /var/lib/uptime, and the log says so.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; log: Logger; database?: string }): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(opts.dataDir);
  const metaFile = join(dataDir, 'postgres.json');
  const database = opts.database ?? EMBEDDED_DATABASE;
  const log = opts.log.child({ component: 'embedded-postgres' });
  mkdirSync(dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // As root, Postgres runs as the `postgres` user, which must be able to enter DATA_DIR
  // (its own subdirectory stays 0700; credentials in postgres.json stay 0600).
  if (asRoot) chmodSync(dataDir, statSync(dataDir).mode | 0o011);

  let meta = readMeta(metaFile);
  const fresh = !meta;
  const inside = join(dataDir, 'postgres');
  let user: PostgresUser | undefined;
  const place = placeCluster({
    recorded: meta?.dir,
    inside,
    initialisedInside: existsSync(join(inside, 'PG_VERSION')),
    postgresCanEnter: () => !asRoot || canEnter(dataDir, (user ??= postgresUser())),
    outside: () => outsideDir(dataDir),
  });
  const pgDir = place.dir;
  if (!meta || meta.dir !== pgDir) {
    meta = { ...(meta ?? { user: 'uptime', password: randomBytes(18).toString('base64url'), port: await freePort() }), dir: pgDir };
    writeMeta(metaFile, meta);
  }
  if (place.outside && fresh && existsSync(pgDir)) {
    // A cluster whose credentials went with a deleted DATA_DIR at the same path: kept, out of the way.
    const aside = `${pgDir}.orphaned-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(pgDir, aside);
    log.warn({ dir: aside }, 'moved aside the cluster of a DATA_DIR that was deleted (its credentials are gone)');
  }

  const running = runningPostmasterPort(pgDir);
  if (running !== undefined) {
    meta = { ...meta, port: running };
    log.info({ port: running, dir: pgDir }, 'using the embedded Postgres already running in DATA_DIR');
    await ensureDatabase(meta, database);
    return { url: urlFor(meta, database), adminUrl: urlFor(meta, 'postgres'), owned: false, dir: pgDir, stop: async () => {} };
  }

  if (!(await portIsFree(meta.port))) {
    meta = { ...meta, port: await freePort() };
    writeMeta(metaFile, meta);
  }

  const started = Date.now();
  if (asRoot) user ??= postgresUser();
  // The programs of the embedded-postgres package; as root, a copy the postgres user can run when
  // the checkout is closed to it.
  const binaries = binariesFor(user, await packagedBinaries());
  if (binaries.root.startsWith(outsideBase))
    log.debug({ dir: binaries.root }, 'running the Postgres programs from a copy the postgres user can reach');
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    if (place.outside) {
      log.info(
        { dir: pgDir, dataDir },
        `the postgres user cannot enter DATA_DIR: the embedded Postgres keeps its data in ${pgDir} (recorded in DATA_DIR/postgres.json)`,
      );
      mkdirSync(outsideBase, { recursive: true, mode: 0o755 });
    }
    log.info({ dir: pgDir }, 'initialising the embedded Postgres');
    await initCluster({ dir: pgDir, username: meta.user, password: meta.password, user, binaries });
  }
  let postmaster;
  try {
    postmaster = await startPostmaster({
      dir: pgDir,
      port: meta.port,
      user,
      binaries,
      log,
      flags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    });
  } catch (err) {
    throw new Error(`the embedded Postgres did not start (data in ${pgDir}); run with LOG_LEVEL=debug to see its log`, { cause: err });
  }
  await ensureDatabase(meta, database);
  log.info({ port: meta.port, dir: pgDir, ms: Date.now() - started }, 'embedded Postgres ready');
  return { url: urlFor(meta, database), adminUrl: urlFor(meta, 'postgres'), owned: true, dir: pgDir, stop: postmaster.stop };
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
