import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { Logger } from '../../../../shared/src/logger.ts';
import { freePorts, pidAlive } from './ports.ts';
import { guardChild } from './watchdog.ts';

export class NatsServerMissingError extends Error {
  constructor() {
    super(
      'nats-server was not found (looked at NATS_SERVER_BIN, PATH and /usr/sbin).\n' +
        '  Install it:   apt-get install nats-server   (Debian, Ubuntu)\n' +
        '                brew install nats-server     (macOS)\n' +
        '  or point NATS_URL at a running NATS server with JetStream enabled.',
    );
    this.name = 'NatsServerMissingError';
  }
}

export function findNatsServer(explicit?: string): string {
  const candidates = explicit
    ? [explicit]
    : [
        ...(process.env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, 'nats-server')),
        '/usr/sbin/nats-server',
      ];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // try the next place
    }
  }
  throw new NatsServerMissingError();
}

export interface NatsServerHandle {
  url: string;
  port: number;
  monitorPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs a private `nats-server -js` child on loopback with its store under `storeDir`, in a
 * process group of its own (Ctrl-C reaches the service, which stops it last) and guarded to
 * stop if this process dies first. A pid file beside the store lets the next start end a server
 * left over anyway, so two servers never share one store.
 */
export async function startNatsServer(opts: { storeDir: string; log: Logger; bin?: string; port?: number }): Promise<NatsServerHandle> {
  const bin = findNatsServer(opts.bin);
  const storeDir = resolve(opts.storeDir);
  mkdirSync(storeDir, { recursive: true });
  const pidFile = join(storeDir, 'nats-server.pid');
  await endOrphan(pidFile);

  const [drawn, other] = await freePorts(2);
  const port = opts.port ?? drawn!;
  const monitorPort = port === drawn ? other! : drawn!;
  const log = opts.log.child({ component: 'nats-server' });
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-js', '-sd', storeDir, '-P', pidFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const release = child.pid ? guardChild(child.pid, 'SIGTERM') : () => {};
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) log.trace(line.trim());
  });
  const exited = new Promise<number | null>((res) =>
    child.once('exit', (code) => {
      release();
      res(code);
    }),
  );
  child.once('error', (err) => log.error({ err }, 'nats-server failed'));

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`nats-server exited during start-up:\n${tail}`);
    }
    if (await healthy(monitorPort)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not become ready within 15 s:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  log.info({ port }, 'nats-server ready');

  let stopping: Promise<void> | undefined;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorPort,
    process: child,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      })();
      return stopping;
    },
  };
}

async function healthy(monitorPort: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${monitorPort}/healthz?js-enabled-only=true`, {
      signal: AbortSignal.timeout(1_000),
    });
    return res.ok;
  } catch {
    return false;
  }
}

async function endOrphan(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (Number.isInteger(pid) && pid > 0 && pidAlive(pid) && isNatsServer(pid)) {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100 && pidAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(pidFile, { force: true });
}

function isNatsServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nats-server');
  } catch {
    return false;
  }
}
