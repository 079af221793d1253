import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Config } from '../../shared/src/config.ts';
import { keyFromText } from '../../shared/src/crypto.ts';
import { createMetrics, type Metrics } from '../../shared/src/metrics.ts';
import type { Logger } from '../../shared/src/logger.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { agentPresenceTtlMs, openBucket } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { addressPolicy } from '../../shared/src/net/lookup.ts';
import { userAgent } from '../../shared/src/version.ts';
import { createOwnership } from './assignments/ownership.ts';
import { createChecker } from './check/check.ts';
import { createDnsCache } from './check/dns-cache.ts';
import { createMonitorCheck, targetOf } from './check/monitor-check.ts';
import { createProbeRunner } from './check/types/run.ts';
import { answerCheckTests } from './runtime/check-tests.ts';
import { startCanaries } from './peers/canaries.ts';
import { createPresence } from './peers/presence.ts';
import { startPingEdge } from './ping-edge.ts';
import { jetStreamPublish } from './results/jetstream-publish.ts';
import { createResultPublisher, defaultBufferCapacity, defaultPublishWindow } from './results/publisher.ts';
import { joinRegion } from './runtime/join-region.ts';
import { registerAgentMetrics } from './runtime/metrics.ts';
import { followConnection, retryOnStreamElection } from './runtime/nats-signals.ts';
import { startOpsServer, type OpsServer } from './runtime/ops-server.ts';
import { abandonStart, stopAgent, type AgentParts } from './runtime/shutdown.ts';
import { createSlotRuns } from './runtime/slot-runs.ts';
import { agentStats, type AgentStats } from './runtime/stats.ts';
import { createScheduler } from './schedule/scheduler.ts';

export type { AgentStats } from './runtime/stats.ts';

export const presenceIntervalMs = 5_000;
export const defaultCheckConcurrency = 200;
/** A joining agent leaves its first second of slots to the peers that owned them until they see it. */
export const joinGraceMs = 1_000;
const flushTimeoutMs = 5_000;

export interface AgentOptions {
  config: Config;
  nc: NatsConnection;
  log: Logger;
  region: string;
  agentId?: string;
  /** Port of the health endpoints; 0 picks a free one. */
  port: number;
  host?: string;
  /** Opens sealed basic-auth passwords when AGENT_KEY is unset (the embedded default derives it in-process). */
  checkKey?: Buffer;
  /** Checks running at once at most (default 200). */
  concurrency?: number;
  /** Results held while NATS is away (default 100,000); beyond it the oldest are dropped. */
  bufferCapacity?: number;
  /** Publishes awaiting their ack at most (default 256). */
  publishWindow?: number;
  /** How long stop() lets checks in flight finish before it cancels them (default 10 s). */
  drainTimeoutMs?: number;
  /**
   * Test seam: multiplies every period of the agent (monitor intervals, presence refresh, peer
   * ttl, join grace), so tests need not wait 5 s slots. 1 in production; never read from the environment.
   */
  timeScale?: number;
  /** The process's metrics registry (shared with a control plane in the same process); one of its own by default. */
  metrics?: Metrics;
  /** Port of the regional ping edge (PING_PORT; 0 picks a free one); no edge when left out. */
  pingPort?: number;
  /**
   * Roots trusted by checks besides Node's (tests; an operator's internal CA goes through
   * NODE_EXTRA_CA_CERTS, which every check type honours).
   */
  extraCaCerts?: Array<string | Buffer>;
}

export interface RunningAgent {
  agentId: string;
  region: string;
  /** Where /healthz and /readyz answer. */
  url: string;
  /** Where the regional ping edge answers, when it runs. */
  pingUrl?: string;
  stats(): AgentStats;
  /** The agents of the region this agent counts as live, itself included. */
  members(): string[];
  /** Stops scheduling, leaves the region, lets checks in flight finish, flushes results. */
  stop(): Promise<void>;
}

export function defaultAgentId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .slice(0, 40) || 'agent';
  return `${host}-${randomBytes(3).toString('hex')}`;
}

/**
 * A probe agent talks to NATS only. It announces itself in KV `agents`, shares its region's
 * assignments with the live peers by rendezvous hashing, checks what it owns on a drift-free
 * schedule and publishes each result to RESULTS, buffering while NATS is away.
 * Decisions: docs/adr/0005-probe-agent.md.
 */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const { config, nc, region } = opts;
  const startedAt = Date.now();
  const scale = opts.timeScale ?? 1;
  if (!(scale > 0)) throw new RangeError(`timeScale must be positive, got ${scale}`);
  const names = natsNames(config.NATS_NAMESPACE);
  const agentId = opts.agentId ?? config.AGENT_ID ?? defaultAgentId();
  const host = opts.host ?? '127.0.0.1';
  const log = opts.log.child({ component: 'probe-agent', region, agentId });
  const provision = { replicas: config.NATS_REPLICAS };
  const [agentsKv, assignmentsKv] = await Promise.all([
    openBucket(nc, names, 'agents', provision),
    openBucket(nc, names, 'assignments', provision),
  ]);

  const publisher = createResultPublisher({
    log,
    window: opts.publishWindow ?? defaultPublishWindow,
    capacity: opts.bufferCapacity ?? defaultBufferCapacity,
    publish: jetStreamPublish(nc),
  });
  const source = config.CHECK_SOURCE_ADDRESS !== undefined ? { localAddress: config.CHECK_SOURCE_ADDRESS } : {};
  const checker = createChecker({
    userAgent,
    ...addressPolicy(config),
    ...source,
    ...(opts.extraCaCerts?.length ? { extraCaCerts: opts.extraCaCerts } : {}),
  });
  // Host names the other check types dial, cached like the HTTP checker's own.
  const probeDns = createDnsCache({ ttlMs: 60_000, maxEntries: 10_000 });
  const checkKey = config.AGENT_KEY ? keyFromText(config.AGENT_KEY) : opts.checkKey;
  const probe = createProbeRunner({
    checker,
    key: checkKey,
    httpTarget: (a) => targetOf(a, checkKey),
    ctx: {
      policy: addressPolicy(config),
      resolve: probeDns.resolve,
      userAgent,
      maxBodyBytes: 1024 * 1024,
      ...source,
      ...(opts.extraCaCerts?.length ? { extraCaCerts: opts.extraCaCerts } : {}),
    },
  });
  // The operator's own choice of addresses: not subject to BLOCK_PRIVATE_TARGETS.
  const canaryChecker = createChecker({ userAgent, blockPrivateTargets: false, ...source });
  const canaries = startCanaries({
    urls: config.CANARY_URLS,
    checker: canaryChecker,
    intervalMs: config.CANARY_INTERVAL * 1000 * scale,
    log: log.child({ component: 'canaries' }),
  });
  const metrics = opts.metrics ?? createMetrics();
  const intervalMs = (a: { interval: number }) => Math.max(1, Math.round(a.interval * 1000 * scale));
  const slots = createSlotRuns({
    region,
    names,
    log,
    metrics,
    publisher,
    intervalMs,
    owned: (key) => ownership.owned(key),
    check: createMonitorCheck({ checker, agentId, region, key: checkKey, probe }),
  });
  const scheduler = createScheduler<NodeJS.Timeout>({
    now: Date.now,
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (t) => clearTimeout(t),
    concurrency: opts.concurrency ?? defaultCheckConcurrency,
    run: slots.run,
    onError: (err, key) => log.error({ err, key }, 'check run failed'),
    onLateness: (lateMs) => metrics.scheduleLateness.observe({ region }, Math.max(0, lateMs) / 1000),
  });
  const ownership = createOwnership({ self: agentId, scheduler, intervalMs, log, now: Date.now, since: startedAt });
  const presence = createPresence({
    kv: agentsKv,
    names,
    region,
    agentId,
    log,
    periodMs: presenceIntervalMs * scale,
    ttlMs: agentPresenceTtlMs * scale,
    onChange: (members) => ownership.setMembers(members),
    canaries: () => canaries.report(),
  });
  registerAgentMetrics(metrics, { publisher, ownership });
  const parts: AgentParts = {
    nc,
    log,
    publisher,
    checker,
    canaries: { stop: () => canaries.stop(), checker: canaryChecker },
    scheduler,
    presence,
    slots,
    connection: followConnection(nc, { presence, publisher }),
    elections: retryOnStreamElection(nc, publisher),
  };

  let ops: OpsServer;
  try {
    const graceMs = joinGraceMs * scale;
    parts.assignments = await joinRegion({ presence, ownership, slots, kv: assignmentsKv, names, region, log, graceMs });
    ops = parts.ops = await startOpsServer({ log, nc, metrics, port: opts.port, host });
    parts.checkTests = answerCheckTests({ nc, names, region, agentId, probe, log });
    if (opts.pingPort !== undefined) {
      parts.edge = await startPingEdge({ config, nc, names, region, log, metrics, port: opts.pingPort, host });
    }
  } catch (err) {
    await abandonStart(parts);
    throw err;
  }
  log.info({ url: ops.url, agents: presence.members().length }, 'probe agent started');

  let stopping: Promise<void> | undefined;
  const limits = { drainTimeoutMs: opts.drainTimeoutMs ?? 10_000, flushTimeoutMs };
  return {
    agentId,
    region,
    url: ops.url,
    ...(parts.edge ? { pingUrl: parts.edge.url } : {}),
    stats: () => agentStats({ slots, publisher, ownership, presence, scheduler }),
    members: () => presence.members(),
    stop: () => (stopping ??= stopAgent(parts, limits)),
  };
}
