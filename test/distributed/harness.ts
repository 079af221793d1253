import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { allRoles, type Role } from '../../control-plane/src/runtime/roles.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import { loadConfig, type Config } from '../../shared/src/config.ts';
import { CheckResult, resultMsgId } from '../../shared/src/contracts/monitoring.ts';
import { connectNats, type NatsConnection } from '../../shared/src/nats.ts';
import { natsNames, type Names } from '../../shared/src/subjects.ts';
import { createTestDatabase, quietLog, type TestDatabase } from '../harness/db.ts';
import type { ClusterNode, NatsCluster } from './cluster.ts';

export interface ClusterControlPlane {
  url: string;
  config: Config;
  db: TestDatabase;
  nc: NatsConnection;
  names: Names;
  cp: RunningControlPlane;
  stop(): Promise<void>;
}

/**
 * A control plane as a deployment runs it: NATS_URL lists every server, NATS_REPLICAS matches the
 * cluster, and the connection is the product's own (reconnects forever).
 */
export async function startClusterControlPlane(
  nats: { servers: string; replicas: number; namespace?: string },
  opts: { roles?: readonly Role[]; env?: Record<string, string>; regionHealthPeriodMs?: number } = {},
): Promise<ClusterControlPlane> {
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    NATS_URL: nats.servers,
    NATS_NAMESPACE: nats.namespace ?? `t${randomBytes(5).toString('hex')}`,
    NATS_REPLICAS: String(nats.replicas),
    LOG_LEVEL: 'silent',
    SECRET_KEY: randomBytes(32).toString('base64url'),
    ...opts.env,
  });
  let nc: NatsConnection | undefined;
  try {
    nc = await connectNats({ servers: config.NATS_URL!, name: 'uptime-control-plane', log: quietLog });
    const cp = await startControlPlane({
      config,
      log: quietLog,
      sql: db.sql,
      nc,
      roles: opts.roles ?? allRoles,
      port: 0,
      ...(opts.regionHealthPeriodMs !== undefined ? { regionHealthPeriodMs: opts.regionHealthPeriodMs } : {}),
    });
    const conn = nc;
    return {
      url: cp.url!,
      config,
      db,
      nc: conn,
      names: natsNames(config.NATS_NAMESPACE),
      cp,
      async stop() {
        await cp.stop();
        await conn.close();
        await db.drop();
      },
    };
  } catch (err) {
    await nc?.close();
    await db.drop();
    throw err;
  }
}

/**
 * A product connection (every node's URL, reconnecting forever) that starts out on `node`.
 * The client shuffles its server list, so a connection that lands elsewhere is closed and made again.
 */
export async function connectToNode(cluster: NatsCluster, node: ClusterNode, name: string): Promise<NatsConnection> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const nc = await connectNats({ servers: cluster.servers, name, log: quietLog });
    if (nc.info?.server_name === node.name) return nc;
    await nc.close();
  }
  throw new Error(`could not land a connection on ${node.name}`);
}

/** Resolves with the server of the connection's next status event of `type`. */
export function nextStatus(nc: NatsConnection, type: 'reconnect' | 'disconnect', timeoutMs = 15_000): Promise<string> {
  const status = nc.status() as AsyncIterable<{ type: string; server?: string }> & { stop?: () => void };
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      status.stop?.();
      reject(new Error(`no ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    void (async () => {
      for await (const s of status) {
        if (s.type !== type) continue;
        clearTimeout(timer);
        status.stop?.();
        resolve(s.server ?? '');
        return;
      }
    })();
  });
}

/** Name of the server leading a stream's raft group. */
export async function streamLeader(nc: NatsConnection, stream: string): Promise<string> {
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  const leader = info.cluster?.leader;
  if (!leader) throw new Error(`stream ${stream} has no leader`);
  return leader;
}

/** How many messages a results stream holds under a subject filter (`<ns>.results.<region>.>`). */
export async function resultCount(nc: NatsConnection, stream: string, filter: string): Promise<number> {
  const info = await (await jetstreamManager(nc)).streams.info(stream, { subjects_filter: filter });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

/**
 * Every result RESULTS holds (under a subject filter), read by sequence: no consumer is made, so
 * nothing needs the meta leader that a node kill may just have taken away.
 */
export async function allResults(nc: NatsConnection, stream: string, filter?: string): Promise<CheckResult[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0) return [];
  const prefix = filter?.endsWith('.>') ? filter.slice(0, -1) : undefined;
  const wanted = (subject: string) => filter === undefined || (prefix ? subject.startsWith(prefix) : subject === filter);
  const out: (CheckResult | undefined)[] = [];
  let seq = state.first_seq;
  const reader = async () => {
    while (seq <= state.last_seq) {
      const at = seq++;
      const m = await jsm.streams.getMessage(stream, { seq: at }).catch((err: unknown) => {
        // A sequence may be deleted; anything else is a failed read.
        if (String(err).includes('no message found')) return null;
        throw err;
      });
      if (m && wanted(m.subject)) out[at - state.first_seq] = CheckResult.parse(m.json());
    }
  };
  await Promise.all(Array.from({ length: 32 }, reader));
  return out.filter((r): r is CheckResult => r !== undefined);
}

/** The key of a slot in one region: what RESULTS dedupes on and Postgres keys results by. */
export const slotKey = resultMsgId;

export interface Arrival {
  result: CheckResult;
  at: number;
}

/**
 * Every result published on RESULTS subjects as it goes by (a core subscription, so duplicates
 * the stream drops are seen too), with a wait that is re-evaluated on each arrival.
 */
export async function recordArrivals(nc: NatsConnection, names: Names) {
  const arrivals: Arrival[] = [];
  let waiters: { done: (a: Arrival[]) => boolean; resolve: () => void }[] = [];
  const sub = nc.subscribe(names.subjects.results, {
    callback: (_err, m) => {
      arrivals.push({ result: CheckResult.parse(m.json()), at: Date.now() });
      waiters = waiters.filter((w) => (w.done(arrivals) ? (w.resolve(), false) : true));
    },
  });
  await nc.flush();
  return {
    arrivals,
    until(done: (a: Arrival[]) => boolean, what: string, timeoutMs: number): Promise<void> {
      if (done(arrivals)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.resolve !== finish);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.push({ done, resolve: finish });
      });
    },
    stop: () => sub.unsubscribe(),
  };
}
