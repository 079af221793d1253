/**
 * The monitored site of the benchmarks, run as its own process so its CPU is not the checker's:
 * an HTTP port that keeps connections alive, an HTTP port and an HTTPS port (self-signed) that
 * answer `Connection: close`, so every check on them opens a fresh connection, as a check every
 * minute does against a real site whose idle timeout is shorter than the interval.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { answer } from './child.ts';

export type TargetOptions = { delayMs: number; certFile?: string; keyFile?: string };
export type TargetReady = { pid: number; keepAlive: string; close: string; tls?: string };

const opts = JSON.parse(process.argv[2] ?? '{}') as TargetOptions;
const body = 'ok';

const handler = (close: boolean) => (req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  const send = () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, ...(close ? { connection: 'close' } : {}) });
    res.end(body);
  };
  if (opts.delayMs > 0) setTimeout(send, opts.delayMs);
  else send();
};

async function listen(server: ReturnType<typeof createServer>, scheme: string): Promise<string> {
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 130_000;
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const servers = [createServer(handler(false)), createServer(handler(true))];
const ready: TargetReady = { pid: process.pid, keepAlive: await listen(servers[0]!, 'http'), close: await listen(servers[1]!, 'http') };
if (opts.certFile && opts.keyFile) {
  const tls = createTlsServer({ cert: readFileSync(opts.certFile), key: readFileSync(opts.keyFile) }, handler(true));
  servers.push(tls);
  ready.tls = await listen(tls, 'https');
}
process.once('SIGTERM', () => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  process.disconnect?.();
});
await answer(ready);
