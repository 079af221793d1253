import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { runStopSteps, type StopStep } from '../../../shared/src/shutdown.ts';
import { startEmbeddedPostgres } from '../platform/embedded/postgres.ts';
import { startNatsServer } from '../platform/embedded/nats-server.ts';
import { pidAlive } from '../platform/embedded/ports.ts';

export interface Infra {
  databaseUrl?: string;
  natsUrl?: string;
  /** The embedded Postgres's data, when this process runs or joined it. */
  postgresDir?: string;
  /** What `stop` stops, last started first, for a caller that stops them among its own steps. */
  steps: StopStep[];
  stop(): Promise<void>;
}

interface NatsRecord {
  url: string;
  pid: number;
}

const natsRecordFile = (config: Config) => join(resolve(config.DATA_DIR), 'nats.json');

/** The private nats-server of a running `npm start` in DATA_DIR, so other local processes can join it. */
export function runningEmbeddedNats(config: Config): string | undefined {
  const file = natsRecordFile(config);
  if (!existsSync(file)) return undefined;
  const rec = JSON.parse(readFileSync(file, 'utf8')) as NatsRecord;
  return pidAlive(rec.pid) ? rec.url : undefined;
}

/**
 * Resolves where Postgres and NATS are. Configured URLs are used as they are; otherwise the
 * embedded default: the Postgres kept in DATA_DIR (joined if already running), and a private
 * nats-server (joined if a running `npm start` opened one).
 */
export async function openInfra(config: Config, log: Logger, need: { postgres: boolean; nats: boolean }): Promise<Infra> {
  const started: StopStep[] = [];
  const steps = () => started.slice().reverse();
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= runStopSteps(log, steps()));
  try {
    let databaseUrl = config.DATABASE_URL;
    let postgresDir: string | undefined;
    if (need.postgres && !databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, log });
      if (pg.owned) started.push({ name: 'the embedded Postgres', stop: pg.stop });
      databaseUrl = pg.url;
      postgresDir = pg.dir;
    }
    let natsUrl = config.NATS_URL;
    if (need.nats && !natsUrl) natsUrl = runningEmbeddedNats(config);
    if (need.nats && !natsUrl) {
      const nats = await startNatsServer({
        storeDir: join(config.DATA_DIR, 'nats'),
        log,
        ...(config.NATS_SERVER_BIN ? { bin: config.NATS_SERVER_BIN } : {}),
      });
      const file = natsRecordFile(config);
      writeFileSync(file, JSON.stringify({ url: nats.url, pid: nats.process.pid ?? 0 } satisfies NatsRecord));
      started.push({
        name: 'nats-server',
        stop: async () => {
          rmSync(file, { force: true });
          await nats.stop();
        },
      });
      natsUrl = nats.url;
    }
    return { databaseUrl, natsUrl, ...(postgresDir ? { postgresDir } : {}), steps: steps(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
