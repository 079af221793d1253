import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { freePorts, pidAlive } from '../../control-plane/src/platform/embedded/ports.ts';
import { cleanEnv, runCli } from '../harness/cli.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * `npm start` as a terminal runs it: in a process group of its own, which Ctrl-C signals whole
 * (npm and the service alike).
 */
function npmStart(env: Record<string, string>): Promise<Started> {
  const child = spawn('npm', ['start'], { cwd: repo, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`npm start was not ready within 120 s:\n${out}`));
    }, 120_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (/uptime is running/.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before it was ready:\n${out}`));
    });
  });
}

async function waitUntil(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const postmasterPid = (dir: string) => Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);

/**
 * A checkout in a private directory (mode 0700, like /root), run as root: Postgres runs as the
 * `postgres` user, who cannot enter it, so the cluster lives under /var/lib/uptime instead.
 */
describe('npm start in a private directory', () => {
  const asRoot = process.getuid?.() === 0;
  let parent: string;
  let dataDir: string;
  let env: Record<string, string>;
  let clusterDir: string;
  before(async () => {
    parent = mkdtempSync(join(tmpdir(), 'uptime-private-'));
    chmodSync(parent, 0o700);
    dataDir = join(parent, 'checkout', 'data');
    mkdirSync(dataDir, { recursive: true });
    const [port, agentPort, pingPort] = await freePorts(3);
    env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      AGENT_PORT: String(agentPort),
      PING_PORT: String(pingPort),
      LOG_LEVEL: 'info',
    };
  });
  after(() => {
    if (clusterDir?.startsWith('/var/lib/uptime/')) rmSync(clusterDir, { recursive: true, force: true });
    rmSync(parent, { recursive: true, force: true });
  });

  it('is ready, says where the cluster is, and stops in order on Ctrl-C', async () => {
    const first = await npmStart(env);
    const url = `http://127.0.0.1:${env.PORT}`;
    assert.ok((await fetch(`${url}/`, { redirect: 'manual' })).status < 500, 'the dashboard answers');
    assert.equal((await fetch(`${url}/readyz`)).status, 200);

    clusterDir = (JSON.parse(readFileSync(join(dataDir, 'postgres.json'), 'utf8')) as { dir: string }).dir;
    if (asRoot) {
      assert.match(clusterDir, /^\/var\/lib\/uptime\/[0-9a-f]{16}$/);
      assert.ok(first.output().includes(`(Postgres in ${clusterDir})`), first.output());
    } else {
      assert.equal(clusterDir, join(dataDir, 'postgres'));
    }
    assert.match(first.output(), /\/docs/);
    assert.match(first.output(), /npm run uptime -- user create/);

    // The CLI and a second process find the cluster through DATA_DIR.
    const created = await runCli(['user', 'create', '--email', 'root@example.com', '--password', 'private-dir-1'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /already running in DATA_DIR/);

    const natsPid = Number(readFileSync(join(dataDir, 'nats', 'nats-server.pid'), 'utf8'));
    const pgPid = postmasterPid(clusterDir);
    process.kill(-first.child.pid!, 'SIGINT');
    assert.equal(await first.exited, 0, first.output());
    const out = first.output();
    const steps = [
      'stopped the probe agent',
      'stopped the control plane',
      'stopped the Postgres pool',
      'stopped the NATS connection',
      'stopped nats-server',
      'stopped the embedded Postgres',
    ];
    let at = out.indexOf('"msg":"stopping');
    assert.notEqual(at, -1, 'says it is stopping');
    for (const step of steps) {
      const next = out.indexOf(`"msg":"${step}`, at);
      assert.ok(next > at, `"${step}" in order:\n${out.slice(at)}`);
      at = next;
    }
    assert.doesNotMatch(out.slice(out.indexOf('"msg":"stopping')), /"level":(40|50)/, 'no warning or error while stopping');
    assert.equal(pidAlive(natsPid), false, 'nats-server stopped');
    assert.equal(pidAlive(pgPid), false, 'Postgres stopped');
  });

  it('finds the same cluster on the next start, and the embedded servers die with a killed service', async () => {
    const second = await npmStart(env);
    try {
      const token = await runCli(['token', 'create', '--email', 'root@example.com', '--name', 'laptop'], env);
      assert.equal(token.code, 0, token.stderr);
      assert.match(token.lastLine, /^upt_/);
      assert.equal((JSON.parse(readFileSync(join(dataDir, 'postgres.json'), 'utf8')) as { dir: string }).dir, clusterDir);

      const servicePid = Number(/"pid":(\d+)/.exec(second.output())![1]);
      const natsPid = Number(readFileSync(join(dataDir, 'nats', 'nats-server.pid'), 'utf8'));
      const pgPid = postmasterPid(clusterDir);
      process.kill(servicePid, 'SIGKILL');
      await waitUntil('nats-server did not stop', () => !pidAlive(natsPid));
      await waitUntil('Postgres did not stop', () => !pidAlive(pgPid));
      await waitUntil('Postgres left its pid file', () => !existsSync(join(clusterDir, 'postmaster.pid')));
    } finally {
      try {
        process.kill(-second.child.pid!, 'SIGKILL');
      } catch {
        // npm ended with the service
      }
      await second.exited;
    }
  });
});
