/**
 * The control plane's app serving a public status page, in a process of its own, counting every
 * statement it sends to Postgres (the driver's debug hook): `queries` answers the count so far.
 */
import { randomBytes } from 'node:crypto';
import { buildApp } from '../../control-plane/src/runtime/app.ts';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts';
import { loadConfig } from '../../shared/src/config.ts';
import { connectNats } from '../../shared/src/nats.ts';
import { answer } from '../lib/child.ts';
import { benchLog } from '../lib/infra.ts';

export type ServerArgs = { databaseUrl: string; natsUrl: string; namespace: string };
export type ServerReady = { url: string; pid: number };

const args = JSON.parse(process.argv[2]!) as ServerArgs;
const config = loadConfig({
  DATABASE_URL: args.databaseUrl,
  NATS_URL: args.natsUrl,
  NATS_NAMESPACE: args.namespace,
  SECRET_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'warn',
});
const sql = createSql(args.databaseUrl, { log: benchLog, max: config.PG_POOL_SIZE });
let queries = 0;
(sql.options as { debug: unknown }).debug = () => {
  queries++;
};
const nc = await connectNats({ servers: args.natsUrl, name: 'bench-status-page', log: benchLog });
const app = await buildApp({ config, sql, nc, log: benchLog, keys: deriveKeys(randomBytes(32)) });
const url = await app.listen({ port: 0, host: '127.0.0.1', backlog: 16_384 });

process.on('message', (m: { cmd: 'queries' }) => {
  if (m.cmd === 'queries') void answer({ queries });
});
process.once('SIGTERM', () => {
  void (async () => {
    await app.close();
    await sql.end({ timeout: 5 });
    await nc.close();
    process.exit(0);
  })();
});
await answer({ url, pid: process.pid } satisfies ServerReady);
