import { resolve } from 'node:path';
import type { Config } from '../../../shared/src/config.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { createMetrics } from '../../../shared/src/metrics.ts';
import { connectNats } from '../../../shared/src/nats.ts';
import { runStopSteps, stopOnSignals, type StopStep } from '../../../shared/src/shutdown.ts';
import { startAgent } from '../../../probe-agent/src/agent.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createSql } from '../platform/db/sql.ts';
import type { Role } from '../runtime/roles.ts';
import { openInfra, runningEmbeddedNats } from '../runtime/infra.ts';
import { startControlPlane } from '../runtime/control-plane.ts';
import { checkPorts, portsInUse } from './ports.ts';
import { welcomeScreen } from './welcome.ts';

/**
 * Runs control-plane roles and/or a probe agent until SIGINT (Ctrl-C) or SIGTERM, then stops
 * them in order, one log line each: agent, control plane, Postgres pool, NATS connection,
 * embedded nats-server and Postgres.
 */
export async function runServer(opts: {
  config: Config;
  log: Logger;
  roles: readonly Role[];
  agentRegion?: string;
  /** Print where everything is and how to make the first account (`uptime start`). */
  welcome?: boolean;
}): Promise<void> {
  const { config, log } = opts;
  const controlPlane = opts.roles.length > 0;
  if (!controlPlane && !config.NATS_URL && !runningEmbeddedNats(config)) {
    throw new Error(
      'A probe agent needs NATS: set NATS_URL to the NATS server of your deployment, ' +
        'or start `npm start` in the same DATA_DIR first and the agent joins it.',
    );
  }
  const ports = portsInUse(config, { api: opts.roles.includes('api'), controlPlane, agent: opts.agentRegion !== undefined });
  await checkPorts(ports, config.HOST);

  const steps: StopStep[] = [];
  const stopAll = () => runStopSteps(log, steps.splice(0).reverse());
  // Listening from the start: Ctrl-C while Postgres initialises stops what has started so far.
  const signals = stopOnSignals(log, stopAll);
  const metrics = createMetrics();
  let url: string | undefined;
  let agentPingUrl: string | undefined;
  let postgresDir: string | undefined;
  try {
    const infra = await openInfra(config, log, { postgres: controlPlane, nats: true });
    steps.push(...infra.steps.slice().reverse());
    postgresDir = infra.postgresDir;
    const nc = await connectNats({ servers: infra.natsUrl!, name: controlPlane ? 'uptime-control-plane' : 'uptime-probe-agent', log });
    steps.push({ name: 'the NATS connection', stop: () => nc.drain() });

    let checkKey: Buffer | undefined;
    if (controlPlane) {
      const sql = createSql(infra.databaseUrl!, { log, max: config.PG_POOL_SIZE });
      steps.push({ name: 'the Postgres pool', stop: () => sql.end({ timeout: 5 }) });
      await migrate(sql, log);
      const cp = await startControlPlane({ config, log, sql, nc, roles: opts.roles, metrics });
      steps.push({ name: 'the control plane', stop: cp.stop });
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
      steps.push({ name: 'the probe agent', stop: agent.stop });
      agentPingUrl = agent.pingUrl;
    }
  } catch (err) {
    // A signal stopped what start-up was using: the stop finishes and exits, not this error.
    if (signals.stopping()) await new Promise(() => {});
    await stopAll();
    throw err;
  }
  if (url && opts.welcome) {
    const embedded = !config.DATABASE_URL || !config.NATS_URL;
    process.stdout.write(
      welcomeScreen({
        url,
        pingBaseUrl: config.PING_BASE_URL,
        triggerBaseUrl: config.TRIGGER_BASE_URL,
        ...(agentPingUrl ? { agentPingUrl, region: opts.agentRegion } : {}),
        ...(embedded ? { dataDir: resolve(config.DATA_DIR) } : {}),
        ...(postgresDir && !postgresDir.startsWith(resolve(config.DATA_DIR)) ? { postgresDir } : {}),
      }),
    );
  } else if (url) {
    process.stdout.write(`\nuptime is running: API and dashboard at ${url}\n\n`);
  }
}
