import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { jetstream } from '@nats-io/jetstream';
import type { Status } from '@nats-io/transport-node';
import type { Config } from '../../shared/src/config.ts';
import { resultMsgId } from '../../shared/src/contracts/monitoring.ts';
import { keyFromText } from '../../shared/src/crypto.ts';
import { createMetrics, instrumentHttp, type Metrics } from '../../shared/src/metrics.ts';
import { startPingEdge, type PingEdge } from './ping-edge.ts';
import { healthRoutes, quietProbeLogs } from '../../shared/src/health.ts';
import type { Logger } from '../../shared/src/logger.ts';
import { natsAlive, type NatsConnection } from '../../shared/src/nats.ts';
import { agentPresenceTtlMs, openBucket } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { addressPolicy } from '../../shared/src/net/lookup.ts';
import { userAgent } from '../../shared/src/version.ts';
import { createOwnership } from './assignments/ownership.ts';
import { watchAssignments } from './assignments/watch.ts';
import { createChecker } from './check/check.ts';
import { createMonitorCheck } from './check/monitor-check.ts';
import { createPresence } from './peers/presence.ts';
import { createResultPublisher, defaultBufferCapacity, defaultPublishWindow } from './results/publisher.ts';
import { createScheduler, type SchedulerStats } from './schedule/scheduler.ts';
import { settledWithin } from './timing.ts';

export const presenceIntervalMs = 5_000;
export const defaultCheckConcurrency = 200;
/** A joining agent leaves its first second of slots to the peers that owned them until they see it. */
export const joinGraceMs = 1_000;
// Short enough that a publish lost with a dead stream leader is retried soon after the new leader
// is up (elections take 4-9 s); a retry keeps its msg id, so a slow ack never doubles a result.
const publishTimeoutMs = 2_000;
const flushTimeoutMs = 5_000;
/**
 * What JetStream announces when a stream gets a leader. Any stream's election wakes a blocked
 * publisher: the agent need not know which stream stores its subjects (the central RESULTS or a
 * regional one), and a retry that finds nothing to send costs nothing.
 */
const streamLeaderElected = '$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.>';

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
}

export interface AgentStats {
  /** Slots checked (a re-check belongs to its slot). */
  checks: number;
  /** Slots whose failure was re-checked. */
  rechecks: number;
  published: number;
  duplicates: number;
  buffered: number;
  dropped: number;
  publishFailures: number;
  assigned: number;
  owned: number;
  /** Live agents of the region, this one included. */
  agents: number;
  scheduler: SchedulerStats;
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
  const scale = opts.timeScale ?? 1;
  if (!(scale > 0)) throw new RangeError(`timeScale must be positive, got ${scale}`);
  const names = natsNames(config.NATS_NAMESPACE);
  const agentId = opts.agentId ?? config.AGENT_ID ?? defaultAgentId();
  const log = opts.log.child({ component: 'probe-agent', region, agentId });
  const provision = { replicas: config.NATS_REPLICAS };
  const [agentsKv, assignmentsKv] = await Promise.all([
    openBucket(nc, names, 'agents', provision),
    openBucket(nc, names, 'assignments', provision),
  ]);

  const js = jetstream(nc);
  const publisher = createResultPublisher({
    log,
    window: opts.publishWindow ?? defaultPublishWindow,
    capacity: opts.bufferCapacity ?? defaultBufferCapacity,
    publish: async (subject, payload, msgId) => {
      const ack = await js.publish(subject, payload, { msgID: msgId, timeout: publishTimeoutMs });
      return { duplicate: ack.duplicate };
    },
  });
  const checker = createChecker({ userAgent, ...addressPolicy(config) });
  const check = createMonitorCheck({
    checker,
    agentId,
    region,
    key: config.AGENT_KEY ? keyFromText(config.AGENT_KEY) : opts.checkKey,
  });
  const cancelChecks = new AbortController();
  const counters = { checks: 0, rechecks: 0 };
  const intervalMs = (a: { interval: number }) => Math.max(1, Math.round(a.interval * 1000 * scale));
  let notBefore = 0;

  const metrics = opts.metrics ?? createMetrics();
  const scheduler = createScheduler<NodeJS.Timeout>({
    now: Date.now,
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (t) => clearTimeout(t),
    concurrency: opts.concurrency ?? defaultCheckConcurrency,
    run: async (key, scheduledAt) => {
      const a = ownership.owned(key);
      if (a === undefined || scheduledAt < notBefore) return;
      const result = await check({
        assignment: a,
        scheduledAt,
        recheckPauseMs: Math.min(2_000, intervalMs(a) / 4),
        signal: cancelChecks.signal,
      });
      if (result === null) return;
      counters.checks++;
      metrics.checks.inc({ region, outcome: result.ok ? 'up' : 'down' });
      metrics.checkDuration.observe({ region }, result.timings.total / 1000);
      if (result.attempts > 1) counters.rechecks++;
      log.debug({ monitorId: a.monitor_id, ok: result.ok, attempts: result.attempts, error: result.error }, 'checked');
      publisher.push({
        subject: names.subjects.result(region, a.monitor_id),
        payload: JSON.stringify(result),
        msgId: resultMsgId(result),
      });
    },
    onError: (err, key) => log.error({ err, key }, 'check run failed'),
    onLateness: (lateMs) => metrics.scheduleLateness.observe({ region }, Math.max(0, lateMs) / 1000),
  });
  const ownership = createOwnership({ self: agentId, scheduler, intervalMs, log });
  const presence = createPresence({
    kv: agentsKv,
    names,
    region,
    agentId,
    log,
    periodMs: presenceIntervalMs * scale,
    ttlMs: agentPresenceTtlMs * scale,
    onChange: (members) => ownership.setMembers(members),
  });
  metrics.gauge('uptime_agent_results_buffered', 'Results waiting to be published (NATS away or slow).', () => publisher.stats().buffered);
  metrics.counter('uptime_agent_results_dropped_total', 'Results dropped because the buffer was full.', () => publisher.stats().dropped);
  metrics.counter('uptime_agent_results_published_total', 'Results published.', () => publisher.stats().published);
  metrics.counter(
    'uptime_agent_publish_failures_total',
    'Publish attempts that failed or timed out (NATS away, a stream leader election).',
    () => publisher.stats().failures,
  );
  metrics.gauge('uptime_agent_monitors_assigned', 'Monitors assigned to this region.', () => ownership.stats().assigned);
  metrics.gauge('uptime_agent_monitors_owned', 'Monitors this agent checks.', () => ownership.stats().owned);

  // nats.js v3 hands out a QueuedIterator, whose stop() unregisters it from a shared connection.
  const status: AsyncIterable<Status> & { stop?: () => void } = nc.status();
  void (async () => {
    for await (const s of status) {
      if (s.type === 'disconnect') {
        presence.setConnected(false);
        publisher.pause();
      } else if (s.type === 'reconnect') {
        presence.setConnected(true);
        publisher.resume();
      }
    }
  })();

  // Without it, results wait after an election for what is in flight to time out and for the
  // rest of the back-off: up to 3 s.
  const elections = nc.subscribe(streamLeaderElected, { callback: () => publisher.retryNow() });

  let assignmentWatch: { stop(): void } | undefined;
  let edge: PingEdge | undefined;
  const app = Fastify({ loggerInstance: log as FastifyBaseLogger, logController: quietProbeLogs() });
  try {
    await presence.start();
    if (presence.peerCount() > 0) notBefore = Date.now() + joinGraceMs * scale;
    assignmentWatch = await watchAssignments({
      kv: assignmentsKv,
      names,
      region,
      log,
      onPut: (key, a) => ownership.put(key, a),
      onDelete: (key) => ownership.delete(key),
    });
    healthRoutes(app, { nats: () => natsAlive(nc) });
    instrumentHttp(app, metrics, 'agent');
    await app.listen({ port: opts.port, host: opts.host ?? '127.0.0.1' });
    if (opts.pingPort !== undefined) {
      edge = await startPingEdge({ config, nc, names, region, log, metrics, port: opts.pingPort, host: opts.host ?? '127.0.0.1' });
    }
  } catch (err) {
    await edge?.stop();
    status.stop?.();
    elections.unsubscribe();
    assignmentWatch?.stop();
    await scheduler.stop();
    await presence.stop();
    publisher.close();
    await checker.close();
    await app.close();
    throw err;
  }
  const addr = app.server.address();
  const url = `http://${opts.host ?? '127.0.0.1'}:${addr && typeof addr === 'object' ? addr.port : opts.port}`;
  log.info({ url, agents: presence.members().length }, 'probe agent started');

  let stopping: Promise<void> | undefined;
  async function stop(): Promise<void> {
    status.stop?.();
    assignmentWatch?.stop();
    const draining = scheduler.stop();
    // Leaving before the drain hands monitors over at once: peers only run slots after this point.
    await presence.stop();
    if (!(await settledWithin(draining, opts.drainTimeoutMs ?? 10_000))) {
      cancelChecks.abort();
      await draining;
    }
    if (!nc.isClosed() && !(await publisher.flush(flushTimeoutMs))) {
      log.warn({ unpublished: publisher.stats().buffered }, 'results left unpublished at stop');
    }
    publisher.close();
    elections.unsubscribe();
    await checker.close();
    await app.close();
    await edge?.stop();
    log.info(publisher.stats(), 'probe agent stopped');
  }

  return {
    agentId,
    region,
    url,
    ...(edge ? { pingUrl: edge.url } : {}),
    stats() {
      const p = publisher.stats();
      return {
        ...counters,
        published: p.published,
        duplicates: p.duplicates,
        buffered: p.buffered,
        dropped: p.dropped,
        publishFailures: p.failures,
        ...ownership.stats(),
        agents: presence.members().length,
        scheduler: scheduler.stats(),
      };
    },
    members: () => presence.members(),
    stop: () => (stopping ??= stop()),
  };
}
