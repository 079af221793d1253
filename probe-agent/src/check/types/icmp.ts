import { spawn } from 'node:child_process';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { BlockedAddressError, refuses, resolveAllowed, type ResolvedAddress } from '../../../../shared/src/net/lookup.ts';
import { armRun, createSignalWatch, type RunCell } from '../abort.ts';
import { checkFailure, type CheckError } from '../classify.ts';
import { noTimings, type ProbeContext, type ProbeOutcome } from './probe.ts';

/**
 * ICMP echo checks run the system's iputils `ping`: Node has no ICMP sockets, and ping works
 * without privileges through ICMP datagram sockets (net.ipv4.ping_group_range) or its own
 * cap_net_raw capability.
 */

export type IcmpTarget = { host: string; count: number; timeout_ms: number };

export type PingSummary = { sent: number; received: number; rtts: number[] };

type PingRun = { stdout: string; stderr: string };

/** Between echo requests: the shortest interval iputils grants users without privileges. */
const INTERVAL_MS = 200;
/** Kept from the wait for the last reply so ping can start and print its summary before the deadline. */
const START_MARGIN_MS = 50;
/** The shortest wait for a reply worth asking for, even when the check's time is nearly spent. */
const MIN_WAIT_MS = 100;

const PING_MISSING = 'ICMP checks need the system ping (iputils-ping) on the probe host';
const NOT_PERMITTED =
  'ICMP sockets are not permitted for this user: allow its group in net.ipv4.ping_group_range (datagram sockets) or give ping cap_net_raw (raw sockets)';

const SUMMARY = /^(\d+) packets transmitted, (\d+) received/m;
const REPLY = /^\d+ bytes from \S+: icmp_seq=(\d+) .*\btime[=<]([\d.]+) ms/;

/** sent, received and one round trip per answered sequence number from iputils output; null without its summary. */
export function parsePingOutput(stdout: string): PingSummary | null {
  const summary = SUMMARY.exec(stdout);
  if (summary === null) return null;
  const rttBySeq = new Map<number, number>();
  for (const line of stdout.split('\n')) {
    const reply = REPLY.exec(line);
    if (reply === null) continue;
    // A duplicate (DUP!) answers a sequence number again: the first reply is its round trip.
    const seq = Number(reply[1]);
    if (!rttBySeq.has(seq)) rttBySeq.set(seq, Number(reply[2]));
  }
  return { sent: Number(summary[1]), received: Number(summary[2]), rtts: [...rttBySeq.values()] };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

class NoAddressError extends Error {
  readonly code = 'ENOTFOUND';
  constructor(readonly hostname: string) {
    super(`No usable address for ${hostname}`);
  }
}

/** The one address ping gets: the literal IP, or the name's first address once the policy allowed them all. */
async function pingAddress(host: string, ctx: ProbeContext): Promise<ResolvedAddress> {
  const family = isIP(host);
  if (family !== 0) {
    if (refuses(ctx.policy, host)) throw new BlockedAddressError(host);
    return { address: host, family: family === 6 ? 6 : 4 };
  }
  const [first] = await resolveAllowed(ctx.policy, ctx.resolve, host);
  // Only an IP may go into ping's arguments: a name there would be resolved a second time, unchecked.
  if (first === undefined || isIP(first.address) === 0) throw new NoAddressError(host);
  return first;
}

/**
 * ping's own waits are sized to end it with its summary before the check's deadline: the
 * requests go out every INTERVAL_MS, and the last one gets what time is left. (`-w` is not used:
 * it makes ping send past `-c` until that many replies came back.)
 */
function pingArgs(address: ResolvedAddress, count: number, remainingMs: number, localAddress: string | undefined): string[] {
  const waitMs = Math.max(MIN_WAIT_MS, remainingMs - (count - 1) * INTERVAL_MS - START_MARGIN_MS);
  const args = ['-n', '-c', String(count), '-i', String(INTERVAL_MS / 1000), '-W', (waitMs / 1000).toFixed(3)];
  args.push(address.family === 6 ? '-6' : '-4');
  if (localAddress !== undefined) args.push('-I', localAddress);
  args.push(address.address);
  return args;
}

/** Settles with `work`, or rejects as soon as the check is stopped (its time is up, or its caller cancelled). */
function unlessStopped<T>(cell: RunCell, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    cell.onAbort = () => reject(new Error('check stopped'));
    if (cell.reason !== null) cell.onAbort();
    work.then(resolve, reject);
  }).finally(() => (cell.onAbort = null));
}

/** Runs ping without a shell and waits for it to exit (no zombie), killing it when the check is stopped. */
function runPing(pingPath: string, args: string[], cell: RunCell): Promise<PingRun> {
  return new Promise<PingRun>((resolve, reject) => {
    const child = spawn(pingPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', () => resolve({ stdout, stderr }));
    cell.onAbort = () => child.kill('SIGKILL');
    if (cell.reason !== null) cell.onAbort();
  }).finally(() => (cell.onAbort = null));
}

/** Why ping ended without a summary, from what it wrote on stderr. */
function pingFailure(stderr: string): CheckError {
  if (/socket: (Operation not permitted|Permission denied)/.test(stderr)) return { class: 'other', message: NOT_PERMITTED };
  if (/Network is unreachable/.test(stderr)) return { class: 'other', message: 'Network unreachable' };
  // "ping: bind: Cannot assign requested address" -> "bind: Cannot assign requested address"
  const line = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
  const reason = line.replace(/^\S*ping: /, '').slice(0, 160);
  return { class: 'other', message: reason === '' ? 'ping failed' : `ping failed: ${reason}` };
}

function isPingMissing(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException;
  return err instanceof Error && e.code === 'ENOENT' && e.syscall?.startsWith('spawn') === true;
}

function failureOf(err: unknown, reason: symbol | null, timeoutMs: number): CheckError {
  if (reason === null && err instanceof BlockedAddressError) {
    return { class: 'other', message: `Target address ${err.address} is not allowed` };
  }
  if (reason === null && isPingMissing(err)) return { class: 'other', message: PING_MISSING };
  return checkFailure(err, reason, timeoutMs);
}

type Clock = { startedAt: number; dns: number };

function elapsed(clock: Clock): { dns: number; total: number } {
  return { dns: round(clock.dns, 3), total: round(performance.now() - clock.startedAt, 3) };
}

function failed(clock: Clock, error: CheckError): ProbeOutcome {
  const { dns, total } = elapsed(clock);
  return { ok: false, status_code: null, timings: { ...noTimings, dns, total }, error, observed: { response_time: total } };
}

/** ok when any echo request got a reply; round trips in ms, loss in percent. */
function replied(clock: Clock, summary: PingSummary): ProbeOutcome {
  const { dns, total } = elapsed(clock);
  const { sent, received, rtts } = summary;
  const packetLoss = sent === 0 ? 100 : round((Math.max(0, sent - received) / sent) * 100, 1);
  const rttAvg = rtts.length === 0 ? null : round(rtts.reduce((a, b) => a + b, 0) / rtts.length, 3);
  const ok = received > 0;
  return {
    ok,
    status_code: null,
    timings: { ...noTimings, dns, total },
    error: ok ? null : { class: 'timeout', message: `No reply to ${sent} pings` },
    observed: { response_time: rttAvg ?? total, packet_loss: packetLoss },
    details: {
      icmp: {
        sent,
        received,
        packet_loss: packetLoss,
        rtt_min: rtts.length === 0 ? null : Math.min(...rtts),
        rtt_avg: rttAvg,
        rtt_max: rtts.length === 0 ? null : Math.max(...rtts),
      },
    },
  };
}

const watch = createSignalWatch();

/** Pings target.host `count` times; `pingPath` names the ping program (tests point it elsewhere). */
export async function checkIcmp(target: IcmpTarget, ctx: ProbeContext, signal?: AbortSignal, pingPath = 'ping'): Promise<ProbeOutcome> {
  const clock: Clock = { startedAt: performance.now(), dns: 0 };
  const { cell, release } = armRun(watch, target.timeout_ms, signal);
  try {
    const address = await unlessStopped(cell, pingAddress(target.host, ctx));
    if (isIP(target.host) === 0) clock.dns = performance.now() - clock.startedAt;
    const remainingMs = target.timeout_ms - (performance.now() - clock.startedAt);
    const run = await runPing(pingPath, pingArgs(address, target.count, remainingMs, ctx.localAddress), cell);
    if (cell.reason !== null) return failed(clock, failureOf(null, cell.reason, target.timeout_ms));
    const summary = parsePingOutput(run.stdout);
    return summary === null ? failed(clock, pingFailure(run.stderr)) : replied(clock, summary);
  } catch (err) {
    return failed(clock, failureOf(err, cell.reason, target.timeout_ms));
  } finally {
    release();
  }
}
