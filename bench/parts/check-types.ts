/**
 * Check cost per type: CPU per check of each check type against a bare loop of the same library
 * doing the same network work (the floor), as the checks part does for HTTP; HTTP checks with
 * assertions against the same checks without; multi-step checks against the plain checks they make.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCert } from '../lib/cert.ts';
import { runScript, startScript } from '../lib/child.ts';
import { compileScript } from '../lib/compile.ts';
import { runPart, type PartContext } from '../lib/part.ts';
import { extraByCategory } from '../lib/profile.ts';
import { median, round, sig } from '../lib/stats.ts';
import type { ServersReady } from './check-types-servers.ts';
import type { CheckKind, ClientName, ClientRun, WorkerAnswer, WorkerArgs } from './check-types-worker.ts';

const ratioGoal = 1.15;
/** Batches each client's measured checks come in, the clients of a case taking turns. */
const BATCHES = 10;

/** One figure: `value` client against `base` client; a goal when `goal` is set. */
type Comparison = { metric: string; value: ClientName; base: ClientName; baseLabel: string; goal?: string };

type Case = {
  kind: CheckKind;
  /** Checks per measured run: quick, full. */
  counts: [number, number];
  concurrency: number;
  comparisons: Comparison[];
};

const floorVs = (metric: string, baseLabel: string): Comparison => ({
  metric,
  value: 'ours',
  base: 'floor',
  baseLabel,
  goal: `${metric}: at most ${ratioGoal}x the ${baseLabel}`,
});

const cases: Case[] = [
  { kind: 'tcp', counts: [2_000, 8_000], concurrency: 32, comparisons: [floorVs('CPU per check, TCP', 'bare node:net loop')] },
  { kind: 'tls', counts: [400, 1_500], concurrency: 32, comparisons: [floorVs('CPU per check, TCP over TLS', 'bare node:tls loop')] },
  {
    kind: 'dns',
    counts: [4_000, 15_000],
    concurrency: 32,
    comparisons: [
      floorVs('CPU per check, DNS', 'bare node:dns Resolver loop'),
      {
        metric: 'CPU per query, DNS, bare loop with a new Resolver per query',
        value: 'floor-resolver-per-query',
        base: 'floor',
        baseLabel: 'bare loop, one Resolver',
      },
    ],
  },
  { kind: 'websocket', counts: [1_200, 5_000], concurrency: 32, comparisons: [floorVs('CPU per check, WebSocket', 'bare ws loop')] },
  { kind: 'grpc', counts: [500, 2_000], concurrency: 32, comparisons: [floorVs('CPU per check, gRPC', 'bare @grpc/grpc-js loop')] },
  {
    kind: 'icmp',
    counts: [200, 600],
    concurrency: 8,
    comparisons: [floorVs('CPU per check, ICMP (ping processes included)', 'bare spawn of ping')],
  },
  {
    kind: 'http',
    counts: [5_000, 20_000],
    concurrency: 32,
    comparisons: [
      {
        metric: 'CPU per check, HTTP keep-alive, no assertions',
        value: 'ours-plain',
        base: 'floor',
        baseLabel: 'bare undici loop',
        goal: `CPU per check, HTTP keep-alive, no assertions: at most ${ratioGoal}x the bare undici loop`,
      },
      {
        metric: 'CPU per check, HTTP keep-alive, 3 assertions',
        value: 'ours',
        base: 'ours-plain',
        baseLabel: 'same check without assertions',
        goal: `CPU per check, HTTP keep-alive, 3 assertions: at most ${ratioGoal}x the same check without`,
      },
      {
        metric: 'CPU per check, HTTP keep-alive, 3 assertions, against the floor',
        value: 'ours',
        base: 'floor',
        baseLabel: 'bare undici loop',
      },
    ],
  },
  {
    kind: 'multistep',
    counts: [2_500, 10_000],
    concurrency: 32,
    comparisons: [
      {
        metric: 'CPU per check, multi-step (2 steps, 1 extraction)',
        value: 'ours',
        base: 'ours-plain',
        baseLabel: 'two of our plain HTTP checks',
        goal: `CPU per check, multi-step: at most ${ratioGoal}x two of our plain HTTP checks`,
      },
    ],
  },
];

const clientsOf = (c: Case): ClientName[] => [...new Set(c.comparisons.flatMap((x) => [x.value, x.base]))];

function packageVersion(name: string): string {
  const file = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function pingVersion(): string {
  try {
    return execFileSync('ping', ['-V'], { encoding: 'utf8' }).trim();
  } catch {
    return 'not found';
  }
}

function describe(ctx: PartContext, rounds: number, maxMs: number): void {
  const q = ctx.quick ? 0 : 1;
  const counts = cases.map((c) => `${c.counts[q].toLocaleString('en')} ${c.kind}`).join(', ');
  ctx.method.push(
    'Services: one process on 127.0.0.1 (bench/parts/check-types-servers.ts): a line service answering `PING` with `+PONG`, plain and over TLS (self-signed RSA 2048 certificate, trusted through NODE_EXTRA_CA_CERTS as in the checks part); a dns2 UDP server answering one A record; a ws echo server; a grpc-js server answering grpc.health.v1 Check with SERVING (protobuf coded by hand in the bench); a node:http keep-alive server answering a small JSON document.',
    'TCP: `checkTcp` (connect, send `PING\\r\\n`, expect `+PONG`) against a bare node:net loop doing the same (connect, write, read until `+PONG`, destroy). TCP over TLS: `checkTcp` with `tls` against node:tls with its own verification (chain and address checked by Node; ours verifies itself and reads the certificate details). No session resumption on either side.',
    "DNS: `checkDns` (A record, resolver 127.0.0.1 at the server's port) against one node:dns `Resolver` reused for every query (`resolve4` with TTLs). Ours keeps one Resolver (c-ares channel) per server asked; the bare loop with a Resolver per query is measured too, to show what a channel per check would cost.",
    'WebSocket: `checkWebSocket` (upgrade, send `ping`, expect it echoed, close) against a bare `ws` loop doing the same exchange (connect, send, wait for the echo, close with the closing handshake, as a check does so that servers see a clean close). gRPC: `checkGrpc` (plaintext, service "") against a bare @grpc/grpc-js `Client` per check making the Check call and closing; both on a local subchannel pool, so every check opens its own connection, as ours does.',
    'ICMP: `checkIcmp` of 127.0.0.1 with count 1 against a bare `spawn("ping", ["-n", "-c", "1", "127.0.0.1"])` reading its output. A check is a process: the CPU counted is the worker\'s own (`process.cpuUsage()`, which includes the fork and exec) plus that of the ping processes it reaped, from cutime+cstime of /proc/self/stat (kernel-accurate sums shown in 10 ms ticks, so a run of several seconds of child CPU is needed). The ICMP round trip itself costs the kernel little on loopback.',
    'HTTP with assertions: an `http` assignment through `createProbeRunner` (what the agent runs for every HTTP monitor) with three assertions (json `$.status` equals "ok", header `content-type` contains "json", response_time less_than 5000), which turn on capturing headers and body, against the same assignment without assertions; that one against a bare undici loop (`request()` + `body.dump()`), all on one keep-alive server. Goals: without assertions at most 1.15x the floor (the checks part\'s goal, here through the runner); the assertions add at most 15% to the check without them.',
    'Multi-step: `runSteps` with two GET steps, the first extracting `$.token` from its JSON, the second carrying it in its URL, against two of our plain checks (`createChecker().run`, no capture) to the same URLs on the same keep-alive server. The floor is our own HTTP check because that is what a step is: the goal bounds what the steps add (capturing and decoding the first body, the JSONPath, the template, the per-step details) to 15%.',
    `The clients of a type (ours, its floor, and any other a comparison names) run in one process (bench/parts/check-types-worker.ts), compiled by esbuild as the agent ships (scripts/build.mjs; tsx's keepNames would wrap every function a check creates in a call the agent never makes): 32 checks in flight (ICMP 8), a warm-up of half as many checks of each (the code the agent runs all day is the optimised code: after a warm-up of 10% identical runs still cost 20-30% more), then ${counts} measured checks of each in ${ctx.quick ? 4 : BATCHES} batches, the clients taking turns batch by batch (at most ${maxMs / 1000} s of checks each); a batch's CPU is read 25 ms after its last check answered, so what it left running (a closing handshake) is its own. CPU per check = CPU of the process over a client's batches (and of the children it reaped) / its checks. ${rounds} round(s), each a new process; the figures are medians. A ratio is the median of the rounds' own ratios. Why turns in one process: identical runs in processes of their own differed by 10-30% (up to 0.81-1.37 as a ratio of two such runs of one WebSocket round) on this shared machine; batches in turns put a slower moment on every client alike, and one process's ratios spread about half as wide.`,
  );
}

await runPart('check-types', 'Check cost per type', async (ctx) => {
  const q = ctx.quick;
  // Identical runs differ by 10-30% on a shared machine: seven short rounds, ratios paired by round.
  const rounds = q ? 1 : 7;
  const maxMs = q ? 5_000 : 8_000;
  describe(ctx, rounds, maxMs);
  for (const name of ['undici', 'ws', '@grpc/grpc-js', 'dns2']) ctx.versions[name] = packageVersion(name);
  ctx.versions['ping'] = pingVersion();

  const dir = mkdtempSync(join(tmpdir(), 'uptime-bench-types-'));
  ctx.cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cert = selfSignedCert(dir);
  const servers = await startScript<ServersReady>('parts/check-types-servers.ts', [JSON.stringify(cert)], {
    timeoutMs: 30_000,
    label: 'servers',
  });
  ctx.cleanup(() => servers.stop());

  // The worker runs as the agent's code ships: compiled by esbuild (bench/lib/compile.ts).
  const worker = await compileScript('parts/check-types-worker.ts');
  const work = async (c: Case, clients: ClientName[], profile?: string) => {
    // A profile names each function's own file: run from the sources for it.
    const compiled = profile === undefined;
    const count = c.counts[q ? 0 : 1];
    const args: WorkerArgs = {
      kind: c.kind,
      clients,
      servers: servers.ready,
      count,
      batches: q ? 4 : BATCHES,
      warmup: Math.max(20, Math.round(count / 2)),
      concurrency: c.concurrency,
      maxMs,
      ...(profile ? { profile } : {}),
    };
    return runScript<WorkerAnswer>(compiled ? worker : 'parts/check-types-worker.ts', [JSON.stringify(args)], {
      compiled,
      timeoutMs: maxMs * clients.length * 3 + 30_000,
      env: { NODE_EXTRA_CA_CERTS: cert.certFile },
      label: `${c.kind} ${clients.join('+')}`,
    });
  };
  /** One client's measured checks, alone in its process, with its profile (run by tsx, so functions keep their files' names). */
  const profiledRun = async (c: Case, client: ClientName, name: string) => {
    const a = await work(c, [client], name);
    return { ...a.runs[client]!, profile: a.profile! };
  };

  const runs = new Map<string, ClientRun[]>();
  const key = (c: Case, client: ClientName) => `${c.kind}|${client}`;
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      const clients = clientsOf(c);
      const answer = await work(c, r % 2 === 0 ? clients : [...clients].reverse());
      for (const client of clients) {
        const a = answer.runs[client]!;
        ctx.log(
          `round ${r + 1} ${c.kind} ${client}: ${a.checks} checks, ${round((a.cpuUs + a.childCpuUs) / a.checks, 1)} µs CPU each (${round(a.childCpuUs / a.checks, 1)} in children), ${Math.round((a.checks * 1000) / a.wallMs)}/s, ${a.failures} failed${a.firstError ? ` (${a.firstError})` : ''}`,
        );
        if (a.failures > 0) {
          ctx.notes.push(`${a.failures} of ${a.checks} checks failed (${c.kind}, ${client}, round ${r + 1}): ${a.firstError ?? ''}`);
        }
        runs.set(key(c, client), [...(runs.get(key(c, client)) ?? []), a]);
      }
    }
  }

  /** Median CPU per check; undefined when a run had no passing check (a check type that cannot run here). */
  const cpuPerCheck = (c: Case, client: ClientName): number | undefined => {
    const list = runs.get(key(c, client))!;
    if (list.some((a) => a.failures === a.checks)) return undefined;
    return median(list.map((a) => (a.cpuUs + a.childCpuUs) / a.checks));
  };
  /** The median of the rounds' ratios of `value` to `base` (each pair measured one after the other). */
  const pairedRatio = (c: Case, value: ClientName, base: ClientName): number => {
    const perCheck = (a: ClientRun) => (a.cpuUs + a.childCpuUs) / a.checks;
    const bases = runs.get(key(c, base))!;
    return median(runs.get(key(c, value))!.map((a, i) => perCheck(a) / perCheck(bases[i]!)));
  };
  const profiledPairs = new Set<string>();

  for (const c of cases) {
    for (const cmp of c.comparisons) {
      const value = cpuPerCheck(c, cmp.value);
      const base = cpuPerCheck(c, cmp.base);
      if (value === undefined || base === undefined) {
        const why = [cmp.value, cmp.base]
          .map((client) => runs.get(key(c, client))!.find((a) => a.failures === a.checks)?.firstError)
          .find((e) => e !== undefined);
        ctx.figures.push({ metric: cmp.metric, value: null, unit: 'µs', baseline: { label: cmp.baseLabel, value: null }, ratio: null });
        if (cmp.goal) ctx.goals.push({ goal: cmp.goal, actual: `not measured: every check failed (${why ?? 'unknown'})`, met: null });
        continue;
      }
      const ratio = pairedRatio(c, cmp.value, cmp.base);
      ctx.figures.push({
        metric: cmp.metric,
        value: round(value, 1),
        unit: 'µs',
        baseline: { label: cmp.baseLabel, value: round(base, 1) },
        ratio: sig(ratio),
      });
      if (c.kind === 'http' && cmp.value === 'ours' && cmp.base === 'ours-plain') {
        ctx.figures.push({ metric: 'CPU the 3 assertions add per HTTP check', value: round(value - base, 1), unit: 'µs' });
      }
      if (cmp.goal === undefined) continue;
      const met = ratio <= ratioGoal;
      ctx.goals.push({
        goal: cmp.goal,
        actual: `${round(ratio)}x (${round(value, 1)} vs ${round(base, 1)} µs)`,
        met,
        ...(met
          ? {}
          : {
              shortfall: `${Math.round((ratio / ratioGoal - 1) * 100)}% over the limit (${round(value - base * ratioGoal, 1)} µs per check too many)`,
            }),
      });
      const pair = `${c.kind}|${cmp.value}|${cmp.base}`;
      if (met || ctx.quick || profiledPairs.has(pair)) continue;
      profiledPairs.add(pair);
      const o = await profiledRun(c, cmp.value, `check-types-${c.kind}-${cmp.value}`);
      const b = await profiledRun(c, cmp.base, `check-types-${c.kind}-${cmp.base}`);
      ctx.limits.push(
        {
          title: `${cmp.metric} (${round(ratio)}x the ${cmp.baseLabel}): where its CPU goes`,
          text: extraByCategory(o, b) + (c.kind === 'icmp' ? ' The profile sees this process only, not the ping processes.' : ''),
          profile: o.profile!,
        },
        { title: `${cmp.baseLabel}, for comparison`, profile: b.profile! },
      );
    }
  }
});
