import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { buildApp } from '../../control-plane/src/runtime/app.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { deriveKeys } from '../../control-plane/src/runtime/keys.ts';
import { loadConfig } from '../../shared/src/config.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { benchLog } from '../lib/infra.ts';
import { summarize, type Summary } from '../lib/stats.ts';

export type Api = { request(path: string, token?: string): Promise<void>; close(): Promise<void> };

/** The control plane's API (buildApp, as the api role runs it) on a loopback port, and a keep-alive client. */
export async function startApi(opts: {
  url: string;
  natsUrl: string;
  namespace: string;
  sql: Sql;
  nc: NatsConnection;
  token: string;
}): Promise<Api> {
  const config = loadConfig({
    DATABASE_URL: opts.url,
    NATS_URL: opts.natsUrl,
    NATS_NAMESPACE: opts.namespace,
    SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    // One client asks thousands of times a minute; the per-token limit is not what is measured.
    API_RATE_LIMIT: '1000000',
  });
  const app = await buildApp({ config, sql: opts.sql, nc: opts.nc, log: benchLog, keys: deriveKeys(randomBytes(32)) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const pool = new Pool(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, { connections: 1 });
  return {
    async request(path, token = opts.token) {
      const { statusCode, body } = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${token}` } });
      const text = await body.text();
      if (statusCode !== 200) throw new Error(`GET ${path}: ${statusCode} ${text.slice(0, 200)}`);
    },
    async close() {
      await pool.close();
      await app.close();
    },
  };
}

/** Latency of up to `count` calls made one after another, after a warm-up (at most a fifth of the time), for at most maxMs. */
export async function latency(count: number, warmup: number, call: (i: number) => Promise<unknown>, maxMs = 30_000): Promise<Summary> {
  const started = performance.now();
  for (let i = 0; i < warmup && performance.now() - started < maxMs / 5; i++) await call(i);
  const deadline = started + maxMs;
  const ms = new Float64Array(count);
  let n = 0;
  while (n < count && (n === 0 || performance.now() < deadline)) {
    const t0 = performance.now();
    await call(n);
    ms[n++] = performance.now() - t0;
  }
  return summarize(ms.subarray(0, n));
}
