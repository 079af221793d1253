import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import { migrate } from '../../control-plane/src/platform/db/migrate.ts';
import { createSql, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { startEmbeddedPostgres } from '../../control-plane/src/platform/embedded/postgres.ts';
import { findNatsServer, startNatsServer } from '../../control-plane/src/platform/embedded/nats-server.ts';
import { createLogger, type Logger } from '../../shared/src/logger.ts';
import { natsNames, type Names } from '../../shared/src/subjects.ts';
import type { PartContext } from './part.ts';
import { versionOf } from './proc.ts';

export const benchLog: Logger = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'warn', destination: process.stderr });

function scratchDir(ctx: PartContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'uptime-bench-'));
  chmodSync(dir, 0o711); // as root, the embedded Postgres runs as `postgres` and must enter it
  ctx.cleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A Postgres server where databases may be created: BENCH_DATABASE_URL, else TEST_DATABASE_URL,
 * else an embedded one in a temporary directory (stopped at the end).
 */
export async function postgresServer(ctx: PartContext): Promise<string> {
  const given = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (given) return given;
  const pg = await startEmbeddedPostgres({ dataDir: join(scratchDir(ctx), 'pg'), log: benchLog, database: 'postgres' });
  ctx.cleanup(pg.stop);
  ctx.notes.push('Postgres: an embedded server started for this run (set BENCH_DATABASE_URL to use another).');
  return pg.adminUrl;
}

/** A fresh migrated database of this run, dropped at the end. */
export async function benchDatabase(ctx: PartContext, adminUrl: string, opts: { max?: number } = {}): Promise<{ url: string; sql: Sql }> {
  const name = `uptime_bench_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const [{ server_version: v }] = (await admin`show server_version`) as unknown as [{ server_version: string }];
  ctx.versions['Postgres'] = v;
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  ctx.cleanup(async () => {
    const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await a.unsafe(`drop database if exists ${name} with (force)`);
    await a.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = createSql(url.toString(), { log: benchLog, max: opts.max ?? 10, applicationName: 'uptime-bench' });
  ctx.cleanup(() => sql.end({ timeout: 5 }));
  await migrate(sql, benchLog);
  return { url: url.toString(), sql };
}

/** BENCH_NATS_URL, else TEST_NATS_URL, else a private `nats-server -js` child (stopped at the end). */
export async function natsServer(ctx: PartContext): Promise<string> {
  const given = process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL;
  if (given) return given;
  const server = await startNatsServer({ storeDir: join(scratchDir(ctx), 'nats'), log: benchLog });
  ctx.cleanup(server.stop);
  ctx.versions['nats-server'] = versionOf(findNatsServer(), ['--version'], /v(\d+\.\d+\.\d+)/);
  ctx.notes.push('NATS: a private nats-server started for this run (set BENCH_NATS_URL to use another).');
  return server.url;
}

/** A connection and a namespace of this run; its streams and buckets are deleted at the end. */
export async function benchNats(
  ctx: PartContext,
  url: string,
  name = 'bench',
): Promise<{ nc: NatsConnection; names: Names; namespace: string }> {
  const namespace = `bench${randomBytes(4).toString('hex')}`;
  const nc = await connect({ servers: url, name: `${name}-${namespace}` });
  ctx.versions['nats-server'] = nc.info?.version ?? 'unknown';
  ctx.cleanup(async () => {
    const jsm = await jetstreamManager(nc);
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(`${namespace}_`) || s.config.name.startsWith(`KV_${namespace}_`))
        await jsm.streams.delete(s.config.name).catch(() => {});
    }
    await nc.close();
  });
  return { nc, names: natsNames(namespace), namespace };
}
