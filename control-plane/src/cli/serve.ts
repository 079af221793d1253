import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { createMetrics } from '../../../shared/src/metrics.ts';
import { connectNats } from '../../../shared/src/nats.ts';
import { stopOnSignals } from '../../../shared/src/shutdown.ts';
import { startAgent } from '../../../probe-agent/src/agent.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createSql } from '../platform/db/sql.ts';
import type { Role } from '../runtime/roles.ts';
import { openInfra, runningEmbeddedNats } from '../runtime/infra.ts';
import { startControlPlane } from '../runtime/control-plane.ts';

/**
 * Runs control-plane roles and/or a probe agent until a signal, then stops them in order:
 * agent, control plane, NATS connection, Postgres pool, embedded children.
 */
export async function runServer(opts: { config: Config; log: Logger; roles: readonly Role[]; agentRegion?: string }): Promise<void> {
  const { config, log } = opts;
  const controlPlane = opts.roles.length > 0;
  if (!controlPlane && !config.NATS_URL && !runningEmbeddedNats(config)) {
    throw new Error(
      'A probe agent needs NATS: set NATS_URL to the NATS server of your deployment, ' +
        'or start `npm start` in the same DATA_DIR first and the agent joins it.',
    );
  }
  const stops: (() => Promise<void>)[] = [];
  const metrics = createMetrics();
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log.warn({ err }, 'stop failed'));
  };
  try {
    const infra = await openInfra(config, log, { postgres: controlPlane, nats: true });
    stops.push(infra.stop);
    const nc = await connectNats({ servers: infra.natsUrl!, name: controlPlane ? 'uptime-control-plane' : 'uptime-probe-agent', log });
    stops.push(() => nc.drain());

    let url: string | undefined;
    let checkKey: Buffer | undefined;
    if (controlPlane) {
      const sql = createSql(infra.databaseUrl!, { log, max: config.PG_POOL_SIZE });
      stops.push(() => sql.end({ timeout: 5 }));
      await migrate(sql, log);
      const cp = await startControlPlane({ config, log, sql, nc, roles: opts.roles, metrics });
      stops.push(cp.stop);
      url = cp.url;
      // An agent in the same process opens check credentials with the key derived here.
      checkKey = cp.keys.checkCredentials;
    }
    if (opts.agentRegion) {
      const agent = await startAgent({
        config,
        nc,
        log,
        region: opts.agentRegion,
        port: config.AGENT_PORT,
        pingPort: config.PING_PORT,
        host: config.HOST,
        metrics,
        ...(checkKey ? { checkKey } : {}),
      });
      stops.push(agent.stop);
    }
    if (url) process.stdout.write(`\nuptime is running: API and dashboard at ${url}\n\n`);
  } catch (err) {
    await stopAll();
    throw err;
  }
  stopOnSignals(log, stopAll);
}
