/**
 * The monitored services of the check-types part, in a process of their own so their CPU is not
 * the checker's: a line protocol answering `PING` with `+PONG` (plain and TLS), a DNS server
 * (dns2, UDP), a WebSocket echo server (ws), a grpc.health.v1 server (grpc-js) and a keep-alive
 * HTTP server answering JSON, all on 127.0.0.1.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Server as GrpcServer, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import dns2, { type Packet } from 'dns2';
import { WebSocketServer } from 'ws';
import { answer } from '../lib/child.ts';
import { healthService, SERVING } from '../lib/grpc-health.ts';

export type ServersArgs = { certFile: string; keyFile: string };
export type ServersReady = {
  pid: number;
  tcp: number;
  tls: number;
  dns: number;
  websocket: number;
  grpc: number;
  /** The name the DNS server answers (one A record). */
  dnsName: string;
  /** Base URL of the JSON server, ending in `/`. */
  http: string;
};

/**
 * What the HTTP server answers on every path: a status the assertions compare, a token the
 * multi-step check extracts (check-types-worker.ts reads `$.status` and `$.token`).
 */
const JSON_BODY = JSON.stringify({ status: 'ok', token: 't-8f3a2c', items: [{ id: 1 }, { id: 2 }] });
const DNS_NAME = 'bench.test';

const args = JSON.parse(process.argv[2]!) as ServersArgs;
const closers: (() => void)[] = [];

/** Answers every `PING\r\n` line with `+PONG\r\n`, as a Redis-like service does. */
function pong(socket: Socket): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    pending += text;
    for (let at = pending.indexOf('PING\r\n'); at !== -1; at = pending.indexOf('PING\r\n')) {
      pending = pending.slice(at + 6);
      socket.write('+PONG\r\n');
    }
  });
  // Checkers close as soon as they have the reply: resets are expected.
  socket.on('error', () => {});
}

async function listenTcp(server: NetServer): Promise<number> {
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  closers.push(() => server.close());
  return (server.address() as AddressInfo).port;
}

async function dnsServer(): Promise<number> {
  const { Packet: DnsPacket } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle: (request: Packet, send: (response: Packet) => Promise<Buffer>) => {
      const question = request.questions[0];
      if (question === undefined) return;
      const response = DnsPacket.createResponseFromRequest(request);
      if (question.name === DNS_NAME && question.type === DnsPacket.TYPE.A) {
        response.answers.push(DnsPacket.createResourceFromQuestion(question, { address: '192.0.2.10', ttl: 300 }));
      } else response.header.rcode = DnsPacket.RCODE.NXDOMAIN;
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  closers.push(() => void server.close());
  return addresses.udp!.port;
}

async function webSocketServer(): Promise<number> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, backlog: 4096 });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('error', () => {});
  });
  closers.push(() => {
    for (const c of wss.clients) c.terminate();
    wss.close();
  });
  return (wss.address() as AddressInfo).port;
}

async function grpcServer(): Promise<number> {
  const server = new GrpcServer();
  server.addService(healthService, {
    Check: (_call: ServerUnaryCall<{ service: string }, number>, callback: sendUnaryData<number>) => callback(null, SERVING),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  closers.push(() => server.forceShutdown());
  return port;
}

async function httpServer(): Promise<string> {
  const server = createHttpServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(JSON_BODY) });
    res.end(JSON_BODY);
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 130_000;
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const tlsOptions = { cert: readFileSync(args.certFile), key: readFileSync(args.keyFile) };
const ready: ServersReady = {
  pid: process.pid,
  tcp: await listenTcp(createNetServer(pong)),
  tls: await listenTcp(createTlsServer(tlsOptions, pong)),
  dns: await dnsServer(),
  dnsName: DNS_NAME,
  websocket: await webSocketServer(),
  grpc: await grpcServer(),
  http: await httpServer(),
};
process.once('SIGTERM', () => {
  for (const close of closers) close();
  process.disconnect?.();
});
await answer(ready);
