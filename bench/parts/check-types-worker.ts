/**
 * Measured loops of checks of one type, in a process of their own: our check function and the
 * floor (the same library doing the same network work with nothing around it), and any other
 * client a comparison names. The clients take turns in batches, so a moment the machine is slower
 * weighs on each alike. Answers with each client's CPU time in this process over its measured
 * checks, and that of the children it reaped (ping).
 */
import { execFileSync, spawn } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { Client as GrpcClient, credentials, Metadata } from '@grpc/grpc-js';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { createChecker, type CheckTarget } from '../../probe-agent/src/check/check.ts';
import { targetOf } from '../../probe-agent/src/check/monitor-check.ts';
import { checkDns } from '../../probe-agent/src/check/types/dns.ts';
import { checkGrpc } from '../../probe-agent/src/check/types/grpc.ts';
import { checkIcmp } from '../../probe-agent/src/check/types/icmp.ts';
import { runSteps } from '../../probe-agent/src/check/types/multistep.ts';
import type { ProbeContext } from '../../probe-agent/src/check/types/probe.ts';
import { createProbeRunner } from '../../probe-agent/src/check/types/run.ts';
import { checkTcp } from '../../probe-agent/src/check/types/tcp.ts';
import { checkWebSocket } from '../../probe-agent/src/check/types/websocket.ts';
import { Assertion, StepSettings } from '../../shared/src/contracts/checks.ts';
import type { Assignment } from '../../shared/src/contracts/monitoring.ts';
import { systemResolve } from '../../shared/src/net/lookup.ts';
import { userAgent } from '../../shared/src/version.ts';
import { answer } from '../lib/child.ts';
import { decodeResponse, encodeRequest, HEALTH_CHECK_PATH, SERVING } from '../lib/grpc-health.ts';
import { profiled, type ProfileSummary } from '../lib/profile.ts';
import type { ServersReady } from './check-types-servers.ts';

export type CheckKind = 'tcp' | 'tls' | 'dns' | 'websocket' | 'grpc' | 'icmp' | 'http' | 'multistep';
/**
 * `ours`: our check (http: with three assertions; multistep: two steps and an extraction).
 * `ours-plain`: http without assertions; multistep's floor, two of our plain checks.
 * `floor`: the library alone. `floor-resolver-per-query`: dns with a new Resolver for each query.
 */
export type ClientName = 'ours' | 'ours-plain' | 'floor' | 'floor-resolver-per-query';
export type WorkerArgs = {
  kind: CheckKind;
  /** Measured in turns, a batch each; one client only when profiling. */
  clients: ClientName[];
  servers: ServersReady;
  /** Measured checks of each client. */
  count: number;
  /** Each client's count is measured in this many batches, the clients taking turns. */
  batches: number;
  /** Checks of each client before measuring. */
  warmup: number;
  concurrency: number;
  /** Wall time each client's measured checks may take in all. */
  maxMs: number;
  /** Profile the measured checks (of the one client) into bench/results/profiles/<profile>.cpuprofile. */
  profile?: string;
};
export type ClientRun = {
  checks: number;
  failures: number;
  firstError?: string;
  wallMs: number;
  /** process.cpuUsage() of this process over the client's batches, user + system. */
  cpuUs: number;
  /** cutime + cstime of /proc/self/stat over its batches: children this process reaped (the ping processes). */
  childCpuUs: number;
};
export type WorkerAnswer = { runs: Partial<Record<ClientName, ClientRun>>; profile?: ProfileSummary };

/** One check: null when it passed, else why not. */
type LoopClient = { one: () => Promise<string | null>; close: () => Promise<void> | void };

const args = JSON.parse(process.argv[2]!) as WorkerArgs;
const { servers } = args;
const TIMEOUT_MS = 10_000;
const ctx: ProbeContext = { policy: { blockPrivateTargets: false }, resolve: systemResolve, userAgent, maxBodyBytes: 1024 * 1024 };
/** The agent passes one signal to every check it runs (its stop); ours get one too. */
const agentSignal = new AbortController().signal;
const passed = (o: { ok: boolean; error: { message: string } | null }) => (o.ok ? null : (o.error?.message ?? 'failed'));

/** Connects, writes PING, waits for +PONG and closes, with nothing around it. */
function barePing(open: () => Socket, readyEvent: 'connect' | 'secureConnect'): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = open();
    let text = '';
    const done = (result: string | null) => {
      socket.destroy();
      resolve(result);
    };
    socket.setEncoding('utf8');
    socket.once(readyEvent, () => socket.write('PING\r\n'));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('+PONG')) done(null);
    });
    socket.once('error', (err) => done(err.message));
    socket.once('close', () => done('closed before +PONG'));
  });
}

function tcpClients(tls: boolean): Partial<Record<ClientName, () => LoopClient>> {
  const port = tls ? servers.tls : servers.tcp;
  return {
    // The agent builds a monitor's target once and checks it again and again (run.ts): so does this.
    ours: () => {
      const target = { host: '127.0.0.1', port, tls, send: 'PING\r\n', expect: '+PONG', timeout_ms: TIMEOUT_MS };
      return { one: async () => passed(await checkTcp(target, ctx, agentSignal)), close: () => {} };
    },
    // Node verifies the chain (NODE_EXTRA_CA_CERTS) and the address against the certificate, as ours does.
    floor: () => ({
      one: () =>
        tls
          ? barePing(() => tlsConnect({ host: '127.0.0.1', port }), 'secureConnect')
          : barePing(() => netConnect({ host: '127.0.0.1', port }), 'connect'),
      close: () => {},
    }),
  };
}

function dnsClients(): Partial<Record<ClientName, () => LoopClient>> {
  const server = `127.0.0.1:${servers.dns}`;
  const ask = async (resolver: Resolver) => ((await resolver.resolve4(servers.dnsName, { ttl: true })).length > 0 ? null : 'no answer');
  const newResolver = () => {
    const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: 1 });
    resolver.setServers([server]);
    return resolver;
  };
  return {
    ours: () => {
      const target = { resolver: '127.0.0.1', port: servers.dns, name: servers.dnsName, record_type: 'A' as const, timeout_ms: TIMEOUT_MS };
      return { one: async () => passed(await checkDns(target, ctx, agentSignal)), close: () => {} };
    },
    floor: () => {
      const resolver = newResolver();
      return { one: () => ask(resolver), close: () => resolver.cancel() };
    },
    'floor-resolver-per-query': () => ({ one: () => ask(newResolver()), close: () => {} }),
  };
}

function webSocketClients(): Partial<Record<ClientName, () => LoopClient>> {
  const url = `ws://127.0.0.1:${servers.websocket}/`;
  return {
    ours: () => {
      const target = { url, headers: [], send: 'ping', expect: 'ping', timeout_ms: TIMEOUT_MS };
      return { one: async () => passed(await checkWebSocket(target, ctx, agentSignal)), close: () => {} };
    },
    floor: () => ({
      one: () =>
        new Promise((resolve) => {
          // The same exchange as ours, closing handshake included (a check closes cleanly, see websocket.ts).
          const ws = new WebSocket(url, { perMessageDeflate: false, headers: { 'user-agent': userAgent } });
          let echoed = false;
          ws.on('open', () => ws.send('ping'));
          ws.on('message', (data: Buffer) => {
            if (echoed || !data.toString('utf8').includes('ping')) return;
            echoed = true;
            ws.close(1000);
          });
          ws.on('error', (err) => {
            ws.terminate();
            resolve(err.message);
          });
          ws.on('close', () => resolve(echoed ? null : 'closed before the echo'));
        }),
      close: () => {},
    }),
  };
}

function grpcClients(): Partial<Record<ClientName, () => LoopClient>> {
  const port = servers.grpc;
  return {
    ours: () => {
      const target = { host: '127.0.0.1', port, tls: false, service: '', metadata: [], timeout_ms: TIMEOUT_MS };
      return { one: async () => passed(await checkGrpc(target, ctx, agentSignal)), close: () => {} };
    },
    // A client (a channel, a connection) per check as ours; a local subchannel pool so no
    // connection of an earlier check is reused.
    floor: () => ({
      one: () =>
        new Promise((resolve) => {
          const client = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
          client.makeUnaryRequest(
            HEALTH_CHECK_PATH,
            encodeRequest,
            decodeResponse,
            { service: '' },
            new Metadata(),
            { deadline: Date.now() + TIMEOUT_MS },
            (err, health) => {
              client.close();
              resolve(err ? err.message : health === SERVING ? null : `status ${health}`);
            },
          );
        }),
      close: () => {},
    }),
  };
}

function icmpClients(): Partial<Record<ClientName, () => LoopClient>> {
  return {
    ours: () => {
      const target = { host: '127.0.0.1', count: 1, timeout_ms: TIMEOUT_MS };
      return { one: async () => passed(await checkIcmp(target, ctx, agentSignal)), close: () => {} };
    },
    floor: () => ({
      one: () =>
        new Promise((resolve) => {
          const child = spawn('ping', ['-n', '-c', '1', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'ignore'] });
          let out = '';
          child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
          child.once('error', (err) => resolve(err.message));
          child.once('close', (code) => resolve(code === 0 && out.includes(' 1 received') ? null : `ping exited with ${code}`));
        }),
      close: () => {},
    }),
  };
}

/** The assertions of the HTTP case: a JSON path, a header and the response time. */
const httpAssertions = [
  Assertion.parse({ source: 'json', path: '$.status', operator: 'equals', target: 'ok' }),
  Assertion.parse({ source: 'header', path: 'content-type', operator: 'contains', target: 'json' }),
  Assertion.parse({ source: 'response_time', operator: 'less_than', target: 5_000 }),
];

function httpAssignment(assertions: Assertion[]): Assignment {
  return {
    monitor_id: '00000000-0000-4000-8000-000000000001',
    project_id: '00000000-0000-4000-8000-000000000002',
    region: 'bench',
    url: `${servers.http}status`,
    method: 'GET',
    valid_http_codes: [200],
    basic_auth_username: null,
    basic_auth_password_sealed: null,
    interval: 60,
    timeout: TIMEOUT_MS / 1000,
    follow_redirects: true,
    type: 'http',
    ...(assertions.length > 0 ? { assertions } : {}),
    revision: '1',
  };
}

/** Our checker as the agent builds it; every check gets a signal, as the agent's do. */
function ourChecker() {
  return createChecker({ userAgent, blockPrivateTargets: false });
}

function httpClients(): Partial<Record<ClientName, () => LoopClient>> {
  /** Each HTTP monitor's check as the agent runs it: createProbeRunner, then its assertions. */
  const runner = (assertions: Assertion[]): LoopClient => {
    const checker = ourChecker();
    const probe = createProbeRunner({ checker, ctx, key: undefined, httpTarget: (a) => targetOf(a, undefined) });
    const assignment = httpAssignment(assertions);
    const signal = new AbortController().signal;
    return {
      one: async () => {
        const r = await probe(assignment, signal);
        return r.ok && !r.degraded ? null : (r.error?.message ?? 'degraded');
      },
      close: () => checker.close(),
    };
  };
  return {
    ours: () => runner(httpAssertions),
    'ours-plain': () => runner([]),
    floor: () => {
      const agent = new Agent({ keepAliveTimeout: 30_000 });
      const url = `${servers.http}status`;
      const headers = { 'user-agent': userAgent, accept: '*/*' };
      return {
        one: async () => {
          const { statusCode, body } = await request(url, { method: 'GET', headers, dispatcher: agent });
          await body.dump();
          return statusCode === 200 ? null : `status ${statusCode}`;
        },
        close: () => agent.close(),
      };
    },
  };
}

/** Two steps: the first's JSON gives a token, the second's URL carries it. */
const steps = [
  StepSettings.parse({ name: 'sign in', url: `${servers.http}token`, extract: [{ name: 'token', source: 'json', path: '$.token' }] }),
  StepSettings.parse({ name: 'read', url: `${servers.http}items?token={{token}}` }),
];

function multistepClients(): Partial<Record<ClientName, () => LoopClient>> {
  const signal = new AbortController().signal;
  return {
    ours: () => {
      const checker = ourChecker();
      return {
        one: async () => passed(await runSteps(steps, { checker, timeoutMs: TIMEOUT_MS, followRedirects: true, signal })),
        close: () => checker.close(),
      };
    },
    'ours-plain': () => {
      const checker = ourChecker();
      const target = (url: string): CheckTarget => ({
        url,
        method: 'GET',
        valid_http_codes: [200],
        basic_auth_username: null,
        basic_auth_password: null,
        timeout_ms: TIMEOUT_MS,
        follow_redirects: true,
      });
      const first = target(`${servers.http}token`);
      const second = target(`${servers.http}items?token=t-8f3a2c`);
      return {
        one: async () => passed(await checker.run(first, signal)) ?? passed(await checker.run(second, signal)),
        close: () => checker.close(),
      };
    },
  };
}

const clientsOf: Record<CheckKind, () => Partial<Record<ClientName, () => LoopClient>>> = {
  tcp: () => tcpClients(false),
  tls: () => tcpClients(true),
  dns: dnsClients,
  websocket: webSocketClients,
  grpc: grpcClients,
  icmp: icmpClients,
  http: httpClients,
  multistep: multistepClients,
};

const makers = clientsOf[args.kind]();
const clients = args.clients.map((name) => {
  const make = makers[name];
  if (make === undefined) throw new Error(`no client ${name} for ${args.kind}`);
  return { name, client: make() };
});

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU of the children this process waited for (proc(5): cutime and cstime, fields 16 and 17, in ticks). */
function childrenCpuUs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1e6) / ticksPerSecond;
}

async function loop(
  client: LoopClient,
  count: number,
  deadline: number,
): Promise<{ checks: number; failures: number; firstError?: string }> {
  let issued = 0;
  let failures = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (issued < count && performance.now() < deadline) {
      issued++;
      const error = await client.one().catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
      if (error !== null) {
        failures++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  return { checks: issued, failures, ...(firstError !== undefined ? { firstError } : {}) };
}

/**
 * What a batch leaves running once its last check answered (a WebSocket's closing handshake, a
 * socket's close) is done within this on loopback: a batch's CPU is read after it, so each
 * client is charged its own.
 */
const SETTLE_MS = 25;

/** One measured batch: CPU from its first check to SETTLE_MS after its last answer. */
async function batch(client: LoopClient, count: number, deadline: number) {
  await sleep(SETTLE_MS);
  const cpu0 = process.cpuUsage();
  const children0 = childrenCpuUs();
  const t0 = performance.now();
  const done = await loop(client, count, deadline);
  const wallMs = performance.now() - t0;
  await sleep(SETTLE_MS);
  const cpu = process.cpuUsage(cpu0);
  return { ...done, wallMs, cpuUs: cpu.user + cpu.system, childCpuUs: childrenCpuUs() - children0 };
}

for (const { client } of clients) await loop(client, args.warmup, performance.now() + args.maxMs);

const measure = async (): Promise<Partial<Record<ClientName, ClientRun>>> => {
  const runs: Partial<Record<ClientName, ClientRun>> = {};
  const perBatch = Math.ceil(args.count / args.batches);
  const batchMs = args.maxMs / args.batches;
  for (let b = 0; b < args.batches; b++) {
    // Turns rotate: each client goes first as often as the others.
    for (let i = 0; i < clients.length; i++) {
      const { name, client } = clients[(b + i) % clients.length]!;
      const left = args.count - (runs[name]?.checks ?? 0);
      if (left <= 0) continue;
      const r = await batch(client, Math.min(perBatch, left), performance.now() + batchMs);
      const sum = runs[name];
      runs[name] = {
        checks: (sum?.checks ?? 0) + r.checks,
        failures: (sum?.failures ?? 0) + r.failures,
        wallMs: (sum?.wallMs ?? 0) + r.wallMs,
        cpuUs: (sum?.cpuUs ?? 0) + r.cpuUs,
        childCpuUs: (sum?.childCpuUs ?? 0) + r.childCpuUs,
        ...((sum?.firstError ?? r.firstError) !== undefined ? { firstError: sum?.firstError ?? r.firstError } : {}),
      };
    }
  }
  return runs;
};
const out: WorkerAnswer = args.profile
  ? await profiled(args.profile, measure).then(({ result, profile }) => ({ runs: result, profile }))
  : { runs: await measure() };
for (const { client } of clients) await client.close();
await answer(out);
process.exit(0);
