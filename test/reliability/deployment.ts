import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import { freePort, freePorts } from '../../control-plane/src/platform/embedded/ports.ts';
import { connectNats, type NatsConnection } from '../../shared/src/nats.ts';
import { natsNames, type Names } from '../../shared/src/subjects.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { runCli } from '../harness/cli.ts';
import { quietLog } from '../harness/db.ts';
import { startWebhookSink, type Target } from '../harness/http.ts';
import { managedProcess, type ManagedProcess } from './processes.ts';

/** A control-plane process (every role) started through `uptime control-plane`. */
export interface ControlPlaneProcess {
  proc: ManagedProcess;
  /** Where its API, ping URLs and notify URLs answer (the same port after a restart). */
  url: string;
}

/** A probe agent started through `uptime probe-agent`, with a fixed AGENT_ID (a supervisor restarts it as itself). */
export interface AgentProcess {
  proc: ManagedProcess;
  id: string;
  /** Its regional ping edge. */
  pingUrl: string;
  /** Its health and metrics port. */
  url: string;
}

export interface Deployment {
  namespace: string;
  names: Names;
  region: string;
  /** The test's own NATS connection (every server, reconnecting forever). */
  nc: NatsConnection;
  /** The test's own Postgres pool, for reading what the product stored. */
  db: postgres.Sql;
  controlPlanes: ControlPlaneProcess[];
  /** Processes running the deadline role alone (with `deadlineProcesses`); `url` serves their health and metrics. */
  deadlines: ControlPlaneProcess[];
  agents: AgentProcess[];
  /** Every long-running process of the product, for crash checks. */
  processes(): ManagedProcess[];
  /** REST API client on the first control plane, with the account's token. */
  api: Call;
  /** The account's API token (never printed). */
  token: string;
  projectId: string;
  /** The fake third-party webhook receiver every alert goes to. */
  sink: Target;
  stop(): Promise<void>;
}

export interface DeploymentOptions {
  databaseUrl: string;
  /** NATS_URL: one server or every node of a cluster, comma-separated. */
  natsServers: string;
  replicas: number;
  controlPlanes?: number;
  agents?: number;
  region?: string;
  /**
   * Run the deadline role in this many processes of its own (`control-plane --roles deadline`),
   * the control planes running every other role; unset, every control plane runs every role.
   */
  deadlineProcesses?: number;
}

const logLevel = process.env.RELIABILITY_LOG_LEVEL ?? 'info';

/**
 * The product as it is deployed: control-plane processes and probe agents started through the
 * CLI on one Postgres database and one NATS namespace, an account made with `uptime user create`
 * and `uptime token create`, and a local webhook receiver.
 */
export async function startDeployment(opts: DeploymentOptions): Promise<Deployment> {
  const namespace = `r${randomBytes(5).toString('hex')}`;
  const names = natsNames(namespace);
  const region = opts.region ?? 'eu-west';
  const secretKey = randomBytes(32).toString('base64url');
  const common = {
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsServers,
    NATS_NAMESPACE: namespace,
    NATS_REPLICAS: String(opts.replicas),
    HOST: '127.0.0.1',
    LOG_LEVEL: logLevel,
    SECRET_KEY: secretKey,
  };
  let db: postgres.Sql | undefined;
  let sink: Target | undefined;
  let nc: NatsConnection | undefined;
  const controlPlanes: ControlPlaneProcess[] = [];
  const deadlines: ControlPlaneProcess[] = [];
  const agents: AgentProcess[] = [];
  const step = async (what: string, fn: () => Promise<unknown>) => {
    await fn().catch((err: unknown) => console.error(`reliability cleanup (${what}) failed:`, err));
  };
  // Processes first (gracefully), then what they used; every step runs even when one fails.
  const stop = async () => {
    await step('agents', () => Promise.all(agents.map((a) => a.proc.stop())));
    await step('control planes', () => Promise.all([...controlPlanes, ...deadlines].map((c) => c.proc.stop())));
    if (nc) {
      const conn = nc;
      await step('namespace', () => deleteNamespace(conn, namespace));
      await step('nats', () => conn.close());
    }
    if (sink) await step('webhook receiver', () => sink!.close());
    if (db) await step('postgres pool', () => db!.end({ timeout: 5 }));
  };
  try {
    db = postgres(opts.databaseUrl, { max: 4, onnotice: () => {}, connect_timeout: 5, idle_timeout: 30 });
    sink = await startWebhookSink();

    const separate = opts.deadlineProcesses !== undefined;
    for (let i = 0; i < (opts.controlPlanes ?? 2); i++) {
      const port = await freePort();
      const proc = managedProcess({
        name: `control-plane-${i + 1}`,
        args: separate ? ['control-plane', '--roles', 'api,ingest,notify,assign'] : ['control-plane'],
        env: { ...common, PORT: String(port) },
        ready: /uptime is running/,
      });
      controlPlanes.push({ proc, url: `http://127.0.0.1:${port}` });
    }
    // The first one migrates the empty database; the others find it done.
    await controlPlanes[0]!.proc.start();
    await Promise.all(controlPlanes.slice(1).map((c) => c.proc.start()));
    for (let i = 0; i < (opts.deadlineProcesses ?? 0); i++) {
      const port = await freePort();
      const proc = managedProcess({
        name: `deadline-${i + 1}`,
        args: ['control-plane', '--roles', 'deadline'],
        env: { ...common, METRICS_PORT: String(port) },
        ready: /"deadline role started"/,
      });
      deadlines.push({ proc, url: `http://127.0.0.1:${port}` });
      await proc.start();
    }

    const cliEnv = { DATABASE_URL: opts.databaseUrl, SECRET_KEY: secretKey, LOG_LEVEL: 'warn' };
    const email = `reliability-${randomBytes(3).toString('hex')}@example.test`;
    const user = await runCli(['user', 'create', '--email', email, '--password', randomBytes(12).toString('base64url')], cliEnv);
    if (user.code !== 0) throw new Error(`uptime user create failed: ${user.stderr}`);
    const { project_id: projectId } = JSON.parse(user.lastLine) as { project_id: string };
    const token = await runCli(['token', 'create', '--email', email, '--name', 'reliability'], cliEnv);
    if (token.code !== 0) throw new Error(`uptime token create failed: ${token.stderr}`);

    for (let i = 0; i < (opts.agents ?? 2); i++) {
      const [agentPort, pingPort] = await freePorts(2);
      const id = `${region}-${String.fromCharCode(97 + i)}`;
      const proc = managedProcess({
        name: `probe-agent-${id}`,
        args: ['probe-agent', '--region', region],
        env: { ...common, AGENT_ID: id, AGENT_PORT: String(agentPort), PING_PORT: String(pingPort) },
        ready: /"probe agent started"/,
      });
      agents.push({ proc, id, pingUrl: `http://127.0.0.1:${pingPort}`, url: `http://127.0.0.1:${agentPort}` });
    }
    await Promise.all(agents.map((a) => a.proc.start()));

    nc = await connectNats({ servers: opts.natsServers, name: 'reliability-observer', log: quietLog });

    return {
      namespace,
      names,
      region,
      nc,
      db,
      controlPlanes,
      deadlines,
      agents,
      processes: () => [...controlPlanes.map((c) => c.proc), ...deadlines.map((d) => d.proc), ...agents.map((a) => a.proc)],
      api: apiClient(controlPlanes[0]!.url, token.lastLine.trim()),
      token: token.lastLine.trim(),
      projectId,
      sink,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Deletes the streams and buckets of a namespace (the NATS server may be shared with other test files). */
async function deleteNamespace(nc: NatsConnection, namespace: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(`${namespace}_`) || s.config.name.startsWith(`KV_${namespace}_`)) {
      await jsm.streams.delete(s.config.name).catch(() => {});
    }
  }
}

/** Crashes of the product's processes so far, as text for an assertion message. */
export function crashReport(dep: Deployment): string[] {
  return dep.processes().flatMap((p) => p.crashes().map((c) => `${p.name} exited (${c.code ?? c.signal}):\n${c.tail.slice(-3_000)}`));
}
