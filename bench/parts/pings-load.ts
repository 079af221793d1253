/**
 * An open-loop load generator in a process of its own: request i is due at start + i / rate and
 * its latency counts from then (as wrk2 does), so a slow server cannot slow the clock that
 * measures it. Without a rate, each connection sends its next request when its answer arrives.
 *
 * It speaks HTTP/1.1 over plain keep-alive sockets (one request at a time per connection, no
 * pipelining), as wrk does, rather than through an HTTP client library: the machine has two
 * cores, and a generator that spends 40 µs per request (undici) takes the CPU the server under
 * test needs, so it would measure itself. The answers are the ping endpoint's: a status line,
 * headers with content-length, a short body.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { answer } from '../lib/child.ts';
import type { LoadArgs, LoadResult } from '../lib/load.ts';
import { createSamples, round, summarize } from '../lib/stats.ts';

const args = JSON.parse(process.argv[2]!) as LoadArgs;
const target = new URL(args.url);
const extra = Object.entries(args.headers ?? {})
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('');
const requests = args.paths.map((p) => Buffer.from(`GET ${p} HTTP/1.1\r\nHost: ${target.host}\r\nUser-Agent: bench\r\n${extra}\r\n`));
/** A ping not answered this long after it was due failed, as `curl -m 10` gives up. */
const answerWithinMs = 10_000;
const latencies = createSamples(1 << 16);
let requestIndex = 0;
let sent = 0;
let ok = 0;
let refused = 0;
let failed = 0;
let late = 0;
/** Answers other than 200, by status. */
const refusedBy = new Map<number, number>();
const durationMs = args.durationS * 1000;

// The first second opens connections and warms both sides up; it is sent but not counted.
const warmupMs = 1_000;
let counting = false;
let countingSince = 0;
let lastAnswer = 0;

/** `resent`: sent again once after its kept-alive connection closed before any byte of the answer, as browsers and HTTP clients do. */
type Job = { dueAt: number; counted: boolean; done?: () => void; resent?: boolean };
/** Requests sent again on a new connection because the one they went out on closed before answering. */
let resent = 0;

const record = (job: Job, status: number) => {
  job.done?.();
  if (!job.counted) return;
  const now = performance.now();
  lastAnswer = now;
  const ms = now - job.dueAt;
  latencies.push(ms);
  if (status === 0) failed++;
  else if (ms > answerWithinMs) late++;
  else if (status === 200) ok++;
  else {
    refused++;
    refusedBy.set(status, (refusedBy.get(status) ?? 0) + 1);
  }
};

/** Jobs waiting for a free connection, oldest first. */
const queue: Job[] = [];
let queueHead = 0;
const idle: Conn[] = [];

interface Conn {
  send(job: Job): void;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('\r\ncontent-length:');

/** The content-length of the response whose head ends at `end` (Node writes the name in lower case); 0 without one. */
function contentLength(data: Buffer, end: number): number {
  const at = data.indexOf(CONTENT_LENGTH);
  if (at < 0 || at > end) return 0;
  let i = at + CONTENT_LENGTH.length;
  while (data[i] === 32) i++;
  let n = 0;
  for (let c = data[i]!; c >= 48 && c <= 57; c = data[++i]!) n = n * 10 + c - 48;
  return n;
}

function openConnection(): Conn {
  let socket: Socket;
  let current: Job | undefined;
  let buf: Buffer | undefined;
  const conn: Conn = {
    send(job) {
      current = job;
      socket.write(requests[requestIndex++ % requests.length]!);
    },
  };
  const next = () => {
    const job = queueHead < queue.length ? queue[queueHead++] : undefined;
    if (queueHead > 4096 && queueHead * 2 > queue.length) {
      queue.splice(0, queueHead);
      queueHead = 0;
    }
    if (job) conn.send(job);
    else idle.push(conn);
  };
  const fail = () => {
    const job = current;
    const answering = buf !== undefined;
    current = undefined;
    buf = undefined;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    if (job && !answering && !job.resent) {
      // The server closed a kept-alive connection as the request went out on it (the race every
      // HTTP client meets): sent again once, first in line, its latency still counted from its due time.
      job.resent = true;
      resent++;
      const other = idle.shift();
      if (other) other.send(job);
      else if (queueHead > 0) queue[--queueHead] = job;
      else queue.unshift(job);
    } else if (job) record(job, 0);
    open();
  };
  const onData = (chunk: Buffer) => {
    let data: Buffer = buf ? Buffer.concat([buf, chunk]) : chunk;
    buf = data;
    for (;;) {
      const end: number = data.indexOf(CRLFCRLF);
      if (end < 0) return;
      const total: number = end + 4 + contentLength(data, end);
      if (data.length < total) return;
      // "HTTP/1.1 200 ...": the status is bytes 9 to 11.
      const status = (data[9]! - 48) * 100 + (data[10]! - 48) * 10 + (data[11]! - 48);
      buf = data.length > total ? data.subarray(total) : undefined;
      const job = current;
      current = undefined;
      if (job) record(job, status);
      next();
      if (!buf) return;
      data = buf;
    }
  };
  function open() {
    socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    socket.on('data', onData);
    socket.once('error', () => {});
    socket.once('close', () => {
      if (!stopping) fail();
    });
    socket.once('connect', next);
  }
  open();
  return conn;
}

let stopping = false;
const dispatch = (job: Job) => {
  if (job.counted) sent++;
  // The connection idle longest: every open connection is used in turn, as viewers that each
  // ask every few seconds use theirs (taking the latest would leave some unused past the
  // server's timeout for a connection that sends nothing, HTTP_HEADERS_TIMEOUT_MS).
  const conn = idle.shift();
  if (conn) conn.send(job);
  else queue.push(job);
};
const conns = Array.from({ length: args.connections }, openConnection);

let t0 = performance.now();
if (args.rate) {
  const interval = 1000 / args.rate;
  const warmup = Math.floor((args.rate * warmupMs) / 1000);
  const total = warmup + Math.floor(args.rate * args.durationS);
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * interval <= now) {
        if (next === warmup) {
          counting = true;
          countingSince = performance.now();
        }
        dispatch({ dueAt: t0 + next++ * interval, counted: counting });
      }
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, Math.min(1, t0 + next * interval - performance.now())));
    };
    tick();
  });
} else {
  const loop = (until: () => boolean) =>
    new Promise<void>((resolve) => {
      const one = () => {
        if (!until()) return resolve();
        dispatch({ dueAt: performance.now(), counted: counting, done: one });
      };
      one();
    });
  await Promise.all(conns.map(() => loop(() => performance.now() - t0 < warmupMs)));
  counting = true;
  t0 = countingSince = performance.now();
  await Promise.all(conns.map(() => loop(() => performance.now() - t0 < durationMs)));
}
// Every answer is awaited (up to 30 s): one that comes past 10 s still counts as an error.
const waitUntil = performance.now() + 30_000;
while (ok + refused + failed + late < sent && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
const elapsedMs = performance.now() - t0;
stopping = true;
const s = summarize(latencies.values());
const unanswered = failed + late + (sent - ok - refused - failed - late);
const result: LoadResult = {
  tool: 'bench generator',
  requests: ok + refused,
  ok,
  errors: refused + unanswered,
  unanswered,
  // Answers over the time from the first counted request to the last answer, queueing included.
  rps: (ok + refused + late) / (Math.max(lastAnswer - countingSince, durationMs) / 1000),
  p50: round(s.p50, 2),
  p95: round(s.p95, 2),
  p99: round(s.p99, 2),
  max: round(s.max, 2),
  durationS: elapsedMs / 1000,
  resent,
  errorKinds: {
    ...Object.fromEntries([...refusedBy].map(([status, count]) => [`HTTP ${status}`, count])),
    ...(failed > 0 ? { 'connection closed': failed } : {}),
    ...(late > 0 ? { 'later than 10 s': late } : {}),
  },
};
await answer(result);
process.exit(0);
