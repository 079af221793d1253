import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNatsServer } from '../../control-plane/src/platform/embedded/nats-server.ts';
import { freePort } from '../../control-plane/src/platform/embedded/ports.ts';

/**
 * Real nats-server processes on loopback, each on a config file of its own: a JetStream cluster
 * (the shape of deploy/nats/cluster.conf) or single nodes of any other layout. Nodes can be
 * killed and started again on their store, which is what the distributed tests do to them.
 */
export interface ClusterNode {
  /** server_name: what stream and consumer info report as leader and replicas. */
  name: string;
  url: string;
  monitorUrl: string;
  running(): boolean;
  /** kill -9, resolved once the process is gone. */
  kill(): Promise<void>;
  /** Starts the node again on its store; resolves when it answers /healthz. */
  start(): Promise<void>;
}

export interface NatsCluster {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated (what NATS_URL holds). */
  servers: string;
  node(name: string): ClusterNode;
  /** Resolves when every running node reports JetStream healthy (meta leader known, assets current). */
  healthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface NodePorts {
  client: number;
  route: number;
  http: number;
}

export function nodeConfig(o: { name: string; cluster: string; ports: NodePorts; peers: number[]; storeDir: string }): string {
  return [
    `server_name: "${o.name}"`,
    `listen: "127.0.0.1:${o.ports.client}"`,
    `http: "127.0.0.1:${o.ports.http}"`,
    'jetstream {',
    `  store_dir: "${o.storeDir}"`,
    '  max_memory_store: 64MB',
    '  max_file_store: 1GB',
    '}',
    'cluster {',
    `  name: "${o.cluster}"`,
    `  listen: "127.0.0.1:${o.ports.route}"`,
    `  routes: [${o.peers.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ')}]`,
    '}',
    '',
  ].join('\n');
}

/** Children still running, killed if the test process exits or is interrupted without stopping them. */
const live = new Set<ChildProcess>();
/** Store directories of clusters not stopped yet, removed with them. */
const stores = new Set<string>();
const killLive = () => {
  for (const c of live) c.kill('SIGKILL');
  for (const d of stores) rmSync(d, { recursive: true, force: true });
};
process.once('exit', killLive);

/** A temporary directory removed when the test process ends, however it ends. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  stores.add(dir);
  return dir;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killLive();
    // The handler is gone now: the signal's default action ends the process as it would have.
    process.kill(process.pid, signal);
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    return res.ok;
  } catch {
    return false;
  }
}

export async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number, diagnostics: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms\n${diagnostics()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface NatsNode extends ClusterNode {
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** The last lines the server logged. */
  tail(): string;
}

/** Ports a node needs, none of them taken by another node of the same test. */
export async function freePorts(count: number, taken = new Set<number>()): Promise<number[]> {
  const out: number[] = [];
  while (out.length < count) {
    const p = await freePort();
    if (!taken.has(p)) {
      taken.add(p);
      out.push(p);
    }
  }
  return out;
}

/** One nats-server process on a config file of its own (written once, reused by restarts). */
export function natsNode(opts: {
  name: string;
  dir: string;
  config: string;
  clientPort: number;
  httpPort: number;
  bin?: string;
}): NatsNode {
  const bin = findNatsServer(opts.bin);
  const configFile = join(opts.dir, `${opts.name}.conf`);
  writeFileSync(configFile, opts.config);
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let tail = '';
  const monitorUrl = `http://127.0.0.1:${opts.httpPort}`;
  const node: NatsNode = {
    name: opts.name,
    url: `nats://127.0.0.1:${opts.clientPort}`,
    monitorUrl,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async start() {
      if (node.running()) return;
      const c = spawn(bin, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = c;
      live.add(c);
      exited = new Promise((r) => c.once('exit', () => (live.delete(c), r())));
      c.stderr?.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-4000)));
      await until(
        `${opts.name} did not enable JetStream`,
        async () => {
          if (!node.running()) throw new Error(`${opts.name} exited during start-up:\n${tail}`);
          return answers(`${monitorUrl}/healthz?js-enabled-only=true`);
        },
        15_000,
        () => tail,
      );
    },
    async kill() {
      if (!node.running()) return;
      child!.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!node.running()) return;
      child!.kill('SIGTERM');
      const killer = setTimeout(() => child?.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
    tail: () => tail,
  };
  return node;
}

/** Resolves when every running node reports JetStream healthy (meta leader known, assets current). */
export async function nodesHealthy(nodes: NatsNode[], timeoutMs = 20_000): Promise<void> {
  // Without js-enabled-only, /healthz answers 503 until the node knows a meta leader and its
  // streams and consumers have caught up: JetStream calls made earlier time out.
  await until(
    'JetStream did not become healthy',
    async () => (await Promise.all(nodes.filter((n) => n.running()).map((n) => answers(`${n.monitorUrl}/healthz`)))).every(Boolean),
    timeoutMs,
    () => nodes.map((n) => `--- ${n.name}\n${n.tail()}`).join('\n'),
  );
}

export async function startNatsCluster(opts: { size?: number; name?: string; bin?: string } = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const clusterName = opts.name ?? 'uptime-test';
  const dir = scratchDir('uptime-cluster-');
  const taken = new Set<number>();
  const ports: NodePorts[] = [];
  for (let i = 0; i < size; i++) {
    const [client, route, http] = (await freePorts(3, taken)) as [number, number, number];
    ports.push({ client, route, http });
  }
  const nodes = ports.map((p, i) => {
    const name = `n${i + 1}`;
    const storeDir = join(dir, name);
    mkdirSync(storeDir, { recursive: true });
    const peers = ports.filter((_, j) => j !== i).map((q) => q.route);
    return natsNode({
      name,
      dir,
      config: nodeConfig({ name, cluster: clusterName, ports: p, peers, storeDir }),
      clientPort: p.client,
      httpPort: p.http,
      ...(opts.bin ? { bin: opts.bin } : {}),
    });
  });

  const cluster: NatsCluster = {
    nodes,
    servers: nodes.map((n) => n.url).join(','),
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no node ${name} (nodes: ${nodes.map((x) => x.name).join(', ')})`);
      return n;
    },
    healthy: (timeoutMs) => nodesHealthy(nodes, timeoutMs),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
      stores.delete(dir);
    },
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    await cluster.healthy();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
