import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import type { Role } from '../../control-plane/src/runtime/roles.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { loadConfig, type Config } from '../../shared/src/config.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';
import { readStream } from '../harness/streams.ts';
import { manualClock, type ManualClock } from './manual-clock.ts';

export interface DeadlinePlane {
  url: string;
  config: Config;
  db: TestDatabase;
  nats: TestNats;
  cp: RunningControlPlane;
  clock: ManualClock;
  account: TestAccount;
  api: Call;
  /** KV `heartbeats`. */
  heartbeats: KV;
  /** KV `leases`. */
  leases: KV;
  /** Every EVENTS message about one heartbeat, in order. */
  events(heartbeatId: string): Promise<{ kind: string; data: any }[]>;
  /** Calls a ping URL of the control plane. */
  ping(path: string, init?: RequestInit): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/** A control plane over its own database and namespace whose heartbeat clock the test moves. */
export async function startDeadlinePlane(opts: { roles?: readonly Role[]; env?: Record<string, string> } = {}): Promise<DeadlinePlane> {
  const db = await createTestDatabase();
  const nats = await createTestNats();
  const clock = manualClock();
  const config = loadConfig({
    DATABASE_URL: db.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: nats.namespace,
    LOG_LEVEL: 'silent',
    SECRET_KEY: randomBytes(32).toString('base64url'),
    ...opts.env,
  });
  const cp = await startControlPlane({
    config,
    log: quietLog,
    sql: db.sql,
    nc: nats.nc,
    roles: opts.roles ?? ['api', 'deadline'],
    port: 0,
    clock,
  });
  const account = await createAccount(db.sql);
  return {
    url: cp.url!,
    config,
    db,
    nats,
    cp,
    clock,
    account,
    api: apiClient(cp.url!, account.token),
    heartbeats: await openBucket(nats.nc, nats.names, 'heartbeats', { replicas: 1 }),
    leases: await openBucket(nats.nc, nats.names, 'leases', { replicas: 1 }),
    async events(heartbeatId) {
      const all = await readStream(nats.nc, nats.names.streams.events);
      return all.filter((e) => e.data.subject.id === heartbeatId).map((e) => ({ kind: e.data.kind, data: e.data }));
    },
    async ping(path, init) {
      const res = await fetch(`${cp.url}${path}`, init);
      return { status: res.status, text: await res.text() };
    },
    async stop() {
      await cp.stop();
      await nats.close();
      await db.drop();
    },
  };
}

/**
 * A second deadline process over the same database and namespace, with connections of its own
 * (so closing its NATS connection cuts it off as a crash would) and the same clock.
 */
export async function startSecondProcess(plane: DeadlinePlane) {
  const nc = await connect({ servers: plane.nats.url, name: 'second-deadline-process' });
  const sql = createSql(plane.db.url, { log: quietLog, max: 4 });
  const cp = await startControlPlane({ config: plane.config, log: quietLog, sql, nc, roles: ['deadline'], port: 0, clock: plane.clock });
  let stopped = false;
  return {
    nc,
    /** Cuts the process off NATS: it can renew nothing, so it stops working, and gives nothing back. */
    async cutOff() {
      await nc.close();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await cp.stop();
      if (!nc.isClosed()) await nc.close();
      await sql.end({ timeout: 5 });
    },
  };
}

/** Holder of each partition lease of the deadline role. */
export async function leaseHolders(leases: KV): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for await (const key of await leases.keys('deadline.*')) {
    const e = await leases.get(key);
    if (e?.operation === 'PUT') out.set(Number(key.split('.')[1]), (e.json() as { holder: string }).holder);
  }
  return out;
}

export const isoIn = (clock: ManualClock, ms: number) => new Date(clock.now() + ms).toISOString();
