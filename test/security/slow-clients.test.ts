import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../shared/src/config.ts';
import { createMetrics } from '../../shared/src/metrics.ts';
import { serverTimeouts } from '../../shared/src/net/server-timeouts.ts';
import { startPingEdge, type PingEdge } from '../../probe-agent/src/ping-edge.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { createTestNats, type TestNats } from '../harness/nats.ts';

/**
 * Slow clients (slowloris): a client that sends its headers, or its body, a byte at a time, or
 * nothing at all, is answered 408 and cut off once HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS
 * have passed, on the control plane and on a probe agent's ping edge; everyone else is served in
 * the meantime. The timeouts are short here (1 s, 2 s); the bounds asserted are generous.
 */
const timeouts = { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_IDLE_TIMEOUT_MS: '5000' };
const CUT_OFF_WITHIN_MS = 20_000;

interface SlowClient {
  /** Everything the server sent before it closed the connection. */
  closed: Promise<{ answer: string; afterMs: number; bytesSent: number }>;
  stop(): void;
}

/** Connects, sends `head` at once, then one byte of `trickle` every 100 ms (cycling) until the server hangs up. */
function slowClient(url: string, head: string, trickle: string): SlowClient {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  const started = Date.now();
  let answer = '';
  let sent = 0;
  socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
  socket.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  socket.once('connect', () => {
    if (head) socket.write(head);
    if (!trickle) return;
    timer = setInterval(() => {
      if (socket.writable) socket.write(trickle[sent++ % trickle.length]!);
    }, 100);
  });
  const closed = once(socket, 'close').then(() => {
    clearInterval(timer);
    return { answer, afterMs: Date.now() - started, bytesSent: sent };
  });
  return {
    closed,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

async function assertCutOff(c: SlowClient, what: string): Promise<void> {
  const timer = setTimeout(() => c.stop(), CUT_OFF_WITHIN_MS);
  const { answer, afterMs, bytesSent } = await c.closed;
  clearTimeout(timer);
  assert.ok(afterMs < CUT_OFF_WITHIN_MS, `${what}: still connected after ${afterMs} ms`);
  assert.match(
    answer,
    /^HTTP\/1\.1 408 /,
    `${what}: answered ${JSON.stringify(answer.slice(0, 80))} after ${afterMs} ms, ${bytesSent} bytes trickled`,
  );
}

/** Runs `served` while `slow` clients hang on, then waits for all of them to be cut off. */
async function servedMeanwhile(slow: SlowClient[], what: string, served: () => Promise<void>): Promise<void> {
  try {
    for (let i = 0; i < 5; i++) await served();
    await Promise.all(slow.map((c, i) => assertCutOff(c, `${what} #${i}`)));
  } finally {
    for (const c of slow) c.stop();
  }
}

const slowHeaders = (path: string) => ({
  head: `GET ${path} HTTP/1.1\r\nHost: localhost\r\n`,
  trickle: 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n',
});

describe('slow clients on the control plane', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: timeouts });
    ada = await createAccount(cp.db.sql);
  });
  after(() => cp.stop());

  const served = async () => {
    const res = await fetch(`${cp.url}/projects`, { headers: { authorization: ada.auth } });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  };

  it('cuts off clients that send their headers a byte at a time, serving others meanwhile', async () => {
    const { head, trickle } = slowHeaders('/projects');
    const slow = Array.from({ length: 20 }, () => slowClient(cp.url, head, trickle));
    await servedMeanwhile(slow, 'slow headers', served);
  });

  it('cuts off clients that send a body a byte at a time, serving others meanwhile', async () => {
    const head = `POST /projects HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ada.auth}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"`;
    const slow = Array.from({ length: 20 }, () => slowClient(cp.url, head, 'a'));
    await servedMeanwhile(slow, 'slow body', served);
    assert.equal((await cp.db.sql`select 1 from projects where name like 'aaa%'`).length, 0, 'no half-sent request was handled');
  });

  it('cuts off clients that connect and send nothing', async () => {
    const slow = Array.from({ length: 20 }, () => slowClient(cp.url, '', ''));
    await servedMeanwhile(slow, 'silent', served);
  });

  it('reads its timeouts from the settings, with safe defaults', () => {
    const defaults = serverTimeouts(loadConfig({}));
    assert.deepEqual(
      {
        requestTimeout: defaults.requestTimeout,
        headers: defaults.http.headersTimeout,
        idle: defaults.connectionTimeout,
        keepAlive: defaults.keepAliveTimeout,
      },
      { requestTimeout: 30_000, headers: 10_000, idle: 60_000, keepAlive: 65_000 },
    );
    assert.ok(defaults.http.connectionsCheckingInterval <= 1_000);
    const server = cp.cp.app!.server;
    assert.equal(server.headersTimeout, 1_000);
    assert.equal(server.requestTimeout, 2_000);
    assert.equal(server.timeout, 5_000);
  });
});

describe("slow clients on a probe agent's ping edge", () => {
  let nats: TestNats;
  let edge: PingEdge;
  before(async () => {
    nats = await createTestNats();
    const config = loadConfig({ NATS_URL: nats.url, NATS_NAMESPACE: nats.namespace, LOG_LEVEL: 'silent', ...timeouts });
    edge = await startPingEdge({
      config,
      nc: nats.nc,
      names: nats.names,
      region: 'eu-west',
      log: quietLog,
      metrics: createMetrics(),
      port: 0,
      host: '127.0.0.1',
    });
  });
  after(async () => {
    await edge.stop();
    await nats.close();
  });

  const served = async () => {
    const res = await fetch(`${edge.url}/heartbeat/${randomUUID()}`, { method: 'POST' });
    assert.equal(res.status, 404, 'an unknown heartbeat, answered at once');
    await res.arrayBuffer();
  };

  it('cuts off clients that send their headers a byte at a time, serving pings meanwhile', async () => {
    const { head, trickle } = slowHeaders(`/heartbeat/${randomUUID()}`);
    const slow = Array.from({ length: 20 }, () => slowClient(edge.url, head, trickle));
    await servedMeanwhile(slow, 'slow headers', served);
  });

  it('cuts off clients that send a body a byte at a time, serving pings meanwhile', async () => {
    const head = `POST /heartbeat/${randomUUID()} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n`;
    const slow = Array.from({ length: 20 }, () => slowClient(edge.url, head, 'a'));
    await servedMeanwhile(slow, 'slow body', served);
  });
});
