import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, freePorts, pidAlive } from '../../control-plane/src/platform/embedded/ports.ts';
import { runCli, startCli } from '../harness/cli.ts';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';

/** `npm start` as a newcomer runs it: no DATABASE_URL, no NATS_URL, only a data directory. */
describe('the embedded default', () => {
  let dataDir: string;
  let env: Record<string, string>;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'uptime-embedded-'));
    const [port, agentPort, pingPort] = await freePorts(3);
    env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      AGENT_PORT: String(agentPort),
      PING_PORT: String(pingPort),
      LOG_LEVEL: 'info',
    };
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs the whole service, keeps its data across a restart, and stops its children', async () => {
    const first = await startCli(['start'], env, /uptime is running: API and dashboard at (\S+)/);
    const url = /API and dashboard at (\S+)/.exec(first.output())![1]!;
    assert.equal(url, `http://127.0.0.1:${env.PORT}`);
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
    const agent = await fetch(`http://127.0.0.1:${env.AGENT_PORT}/readyz`);
    assert.equal(agent.status, 200);
    const edge = await fetch(`http://127.0.0.1:${env.PING_PORT}/heartbeat/00000000-0000-4000-8000-000000000000`);
    assert.equal(edge.status, 404, 'the local ping edge answers');
    assert.match(first.output(), /"region":"local"/);

    // The CLI joins the Postgres that the running service opened.
    const created = await runCli(['user', 'create', '--email', 'newcomer@example.com', '--password', 'first-day-1'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /already running in DATA_DIR/);
    const token = await runCli(['token', 'create', '--email', 'newcomer@example.com', '--name', 'laptop'], env);
    assert.match(token.lastLine, /^upt_/);

    const natsPid = Number(readFileSync(join(dataDir, 'nats', 'nats-server.pid'), 'utf8'));
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.equal(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), false, 'Postgres stopped');
    assert.equal(pidAlive(natsPid), false, 'nats-server stopped');

    const second = await startCli(['start'], env, /uptime is running/);
    try {
      const again = await runCli(['token', 'create', '--email', 'newcomer@example.com', '--name', 'desktop'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.lastLine, /^upt_/);
    } finally {
      second.child.kill('SIGINT');
      assert.equal(await second.exited, 0);
    }
  });

  it('starts Postgres briefly for the CLI when no service is running', async () => {
    const r = await runCli(['token', 'create', '--email', 'newcomer@example.com', '--name', 'offline'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.lastLine, /^upt_/);
    assert.equal(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), false, 'and stops it again');
  });
});

describe('without nats-server installed', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('exits with a message saying how to get it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'uptime-nonats-'));
    try {
      const r = await runCli(['start'], {
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        NATS_SERVER_BIN: join(dataDir, 'no-such-nats-server'),
      });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /nats-server was not found/);
      assert.match(r.stderr, /apt-get install nats-server/);
      assert.match(r.stderr, /brew install nats-server/);
      assert.match(r.stderr, /NATS_URL/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
