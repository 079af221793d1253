/**
 * Schedules `monitors` monitors with a real clock for `durationMs` and checks each slot against a
 * target that answers after 20 ms: our scheduler (probe-agent/src/schedule/scheduler.ts, set up
 * as the agent sets it up) or a naive setTimeout per monitor, re-armed when its check ends.
 */
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createChecker, type CheckTarget } from '../../probe-agent/src/check/check.ts';
import { createScheduler, nextSlot, phaseOf } from '../../probe-agent/src/schedule/scheduler.ts';
import { userAgent } from '../../shared/src/version.ts';
import { answer } from '../lib/child.ts';
import { profiled, type ProfileSummary } from '../lib/profile.ts';
import { createSamples, summarize, type Summary } from '../lib/stats.ts';

export type ScheduleKind = 'ours' | 'naive';
export type ScheduleArgs = { kind: ScheduleKind; monitors: number; intervalMs: number; durationMs: number; url: string; profile?: string };
export type ScheduleAnswer = {
  lateness: Summary;
  /** Median and p99 lateness of the runs of each interval since the start (round 0 first). */
  roundMedians: number[];
  roundP99s: number[];
  /** Runs whose slot is not on the monitor's grid (phase + k × interval). */
  offGrid: number;
  /** Slots that should have run before the end and did not. */
  missed: number;
  failures: number;
  heapBytesPerMonitor: number;
  cpuUsPerRun: number;
  /** What else explains lateness: the loop's own delay, how busy it was, how often the OS preempted it. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  loopUtilization: number;
  involuntaryContextSwitches: number;
  loadAverage: number;
  profile?: ProfileSummary;
};

const args = JSON.parse(process.argv[2]!) as ScheduleArgs;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const checker = createChecker({ userAgent, blockPrivateTargets: false });
const target: CheckTarget = {
  url: args.url,
  method: 'GET',
  valid_http_codes: [200],
  basic_auth_username: null,
  basic_auth_password: null,
  timeout_ms: 10_000,
  follow_redirects: true,
};
const I = args.intervalMs;
const ids = Array.from({ length: args.monitors }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
const lateness = createSamples(Math.ceil(args.monitors * (args.durationMs / I + 1)));
const rounds = createSamples(Math.ceil(args.monitors * (args.durationMs / I + 1)));
let offGrid = 0;
let failures = 0;
let start = 0;
// Slots due before the last second must all have run by the end; the last one may still be in its timer.
let cutoff = 0;
let ranBeforeCutoff = 0;

function record(id: number, slot: number): void {
  const late = Date.now() - slot;
  lateness.push(late);
  rounds.push(Math.floor((slot - start) / I));
  if ((slot - phaseOf(ids[id]!, I)) % I !== 0) offGrid++;
  if (slot < cutoff) ranBeforeCutoff++;
}

const check = async () => {
  if (!(await checker.run(target)).ok) failures++;
};

/** Schedules every monitor; `live` false for the dry run that only weighs what scheduling holds. */
function schedule(live: boolean): { firsts: Float64Array; stop: () => Promise<void> } {
  const firsts = new Float64Array(ids.length);
  const run = async (i: number, slot: number) => {
    if (!live) return;
    record(i, slot);
    await check();
  };
  if (args.kind === 'ours') {
    const index = new Map(ids.map((id, i) => [id, i]));
    const scheduler = createScheduler<NodeJS.Timeout>({
      now: Date.now,
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (t) => clearTimeout(t),
      concurrency: 200,
      run: (id, scheduledAt) => run(index.get(id)!, scheduledAt),
    });
    ids.forEach((id, i) => {
      scheduler.add(id, I);
      firsts[i] = scheduler.dueOf(id)!;
    });
    return { firsts, stop: () => scheduler.stop() };
  }
  const timers: (NodeJS.Timeout | undefined)[] = new Array(ids.length);
  let stopped = false;
  const now = Date.now();
  ids.forEach((id, i) => {
    const first = nextSlot(now, I, phaseOf(id, I));
    firsts[i] = first;
    let k = 0;
    const tick = async () => {
      // The naive loop has no grid of its own: its k-th run belongs to the k-th slot after its first.
      await run(i, first + k++ * I);
      if (!stopped) timers[i] = setTimeout(tick, I);
    };
    timers[i] = setTimeout(tick, first - Date.now());
  });
  return {
    firsts,
    stop: async () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
    },
  };
}

// Weighed in a dry run first, so no collection runs while the measured slots come due.
gc();
const heapBefore = process.memoryUsage().heapUsed;
let dry: ReturnType<typeof schedule> | undefined = schedule(false);
gc();
const heapBytesPerMonitor = (process.memoryUsage().heapUsed - heapBefore) / args.monitors;
await dry.stop();
dry = undefined;
gc();

// Connections and compiled code ready, as in an agent that has been running for a while.
await Promise.all(
  Array.from({ length: 20 }, async () => {
    for (let i = 0; i < 25; i++) await checker.run(target);
  }),
);

const delay = monitorEventLoopDelay({ resolution: 1 });
const measured = async () => {
  start = Date.now();
  cutoff = start + args.durationMs - 1_000;
  const { firsts, stop } = schedule(true);
  delay.enable();
  const elu0 = performance.eventLoopUtilization();
  const switches0 = process.resourceUsage().involuntaryContextSwitches;
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, start + args.durationMs - Date.now()));
  await stop();
  delay.disable();
  const cpu = process.cpuUsage(cpu0);
  return {
    firsts,
    cpuUs: cpu.user + cpu.system,
    elu: performance.eventLoopUtilization(elu0).utilization,
    switches: process.resourceUsage().involuntaryContextSwitches - switches0,
  };
};
const { result: m, profile } = args.profile
  ? await profiled(args.profile, measured, 1_000)
  : { result: await measured(), profile: undefined };
await checker.close();

function byRound(): Summary[] {
  const groups: number[][] = [];
  const late = lateness.values();
  const which = rounds.values();
  for (let i = 0; i < late.length; i++) (groups[which[i]!] ??= []).push(late[i]!);
  return Array.from(groups, (values) => summarize(values ?? []));
}
const rounded = byRound();

let expected = 0;
for (const first of m.firsts) {
  if (first < cutoff) expected += Math.floor((cutoff - 1 - first) / I) + 1;
}
const result: ScheduleAnswer = {
  lateness: summarize(lateness.values()),
  roundMedians: rounded.map((r) => r.p50),
  roundP99s: rounded.map((r) => r.p99),
  offGrid,
  missed: Math.max(0, expected - ranBeforeCutoff),
  failures,
  heapBytesPerMonitor,
  cpuUsPerRun: m.cpuUs / Math.max(1, lateness.length),
  loopDelayP99Ms: delay.percentile(99) / 1e6,
  loopDelayMaxMs: delay.max / 1e6,
  loopUtilization: m.elu,
  involuntaryContextSwitches: m.switches,
  loadAverage: loadavg()[0]!,
  ...(profile ? { profile } : {}),
};
await answer(result);
process.exit(0);
