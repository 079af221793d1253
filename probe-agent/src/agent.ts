import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { KV } from '@nats-io/kv';
import type { Config } from '../../shared/src/config.ts';
import { AgentPresence } from '../../shared/src/contracts/agent.ts';
import { healthRoutes, quietProbeLogs } from '../../shared/src/health.ts';
import type { Logger } from '../../shared/src/logger.ts';
import { natsAlive, type NatsConnection } from '../../shared/src/nats.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { version } from '../../shared/src/version.ts';

export const presenceIntervalMs = 5_000;

export interface AgentOptions {
  config: Config;
  nc: NatsConnection;
  log: Logger;
  region: string;
  agentId?: string;
  /** Port of the health endpoints; 0 picks a free one. */
  port: number;
  host?: string;
}

export interface RunningAgent {
  agentId: string;
  region: string;
  /** Where /healthz and /readyz answer. */
  url: string;
  stop(): Promise<void>;
}

export function defaultAgentId(): string {
  const host = hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40) || 'agent';
  return `${host}-${randomBytes(3).toString('hex')}`;
}

/**
 * A probe agent talks to NATS only. It announces itself in KV `agents` (the bucket's TTL
 * forgets it ~15 s after it dies) and answers health checks on its own port.
 */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const names = natsNames(opts.config.NATS_NAMESPACE);
  const agentId = opts.agentId ?? opts.config.AGENT_ID ?? defaultAgentId();
  const log = opts.log.child({ component: 'probe-agent', region: opts.region, agentId });
  const startedAt = new Date().toISOString();
  const presenceKey = names.keys.agent(opts.region, agentId);

  const agents: KV = await openBucket(opts.nc, names, 'agents', { replicas: opts.config.NATS_REPLICAS });
  const announce = async () => {
    const presence: AgentPresence = {
      agent_id: agentId,
      region: opts.region,
      version,
      hostname: hostname(),
      started_at: startedAt,
      seen_at: new Date().toISOString(),
    };
    await agents.put(presenceKey, JSON.stringify(AgentPresence.parse(presence)));
  };
  await announce();
  const presenceTimer = setInterval(() => {
    announce().catch((err: unknown) => log.warn({ err }, 'presence update failed'));
  }, presenceIntervalMs);

  const app = Fastify({ loggerInstance: log as FastifyBaseLogger, logController: quietProbeLogs() });
  healthRoutes(app, { nats: () => natsAlive(opts.nc) });
  await app.listen({ port: opts.port, host: opts.host ?? '127.0.0.1' });
  const addr = app.server.address();
  const url = `http://${opts.host ?? '127.0.0.1'}:${addr && typeof addr === 'object' ? addr.port : opts.port}`;
  log.info({ url }, 'probe agent started');

  return {
    agentId,
    region: opts.region,
    url,
    async stop() {
      clearInterval(presenceTimer);
      await app.close();
      // Leaving at once hands this agent's monitors to its peers without waiting for the TTL.
      await agents.delete(presenceKey).catch(() => {});
      log.info('probe agent stopped');
    },
  };
}
