import { crashReport, startDeployment, type Deployment, type DeploymentOptions } from './deployment.ts';
import { createObserver, type Observer, type Tally } from './observer.ts';
import { p50max, type ResultRow } from './results.ts';
import {
  createLedger,
  createTraffic,
  createWorkload,
  monitorStatus,
  type Ledger,
  type Traffic,
  type TrafficOptions,
  type Workload,
} from './traffic.ts';

/** Cycles per fault: 10 by default; RELIABILITY_CYCLES shortens a local run. */
export const cyclesPerFault = Number(process.env.RELIABILITY_CYCLES ?? 10);

export interface Suite {
  dep: Deployment;
  workload: Workload;
  ledger: Ledger;
  traffic: Traffic;
  observer: Observer;
  stop(): Promise<void>;
}

export interface SuiteOptions extends DeploymentOptions {
  heartbeats?: number;
  monitors?: number;
  flipping?: number;
  traffic?: Partial<TrafficOptions>;
}

/** The deployment, its workload, the traffic (not started) and the observer; every monitor up. */
export async function startSuite(opts: SuiteOptions): Promise<Suite> {
  const dep = await startDeployment(opts);
  let workload: Workload | undefined;
  let observer: Observer | undefined;
  const stop = async () => {
    observer?.stop();
    await workload?.close().catch(() => {});
    await dep.stop();
  };
  try {
    workload = await createWorkload(dep, { heartbeats: opts.heartbeats ?? 12, monitors: opts.monitors ?? 4, flipping: opts.flipping ?? 2 });
    const ledger = createLedger();
    const traffic = createTraffic(dep, workload, ledger, {
      pingEveryMs: 1_000,
      triggerEveryMs: 400,
      noticeEveryMs: 2_000,
      flipDwellMs: 10_000,
      ...opts.traffic,
    });
    observer = createObserver(dep, workload, ledger, traffic);
    for (const id of workload.stuck) observer.owe(id, 'heartbeat.down');
    await Promise.all(workload.monitors.map((m) => monitorStatus(dep.db, m.id, 1, 60_000)));
    // The stuck heartbeats' downs are owed from here on: the first cycle counts from a tally in
    // which they have arrived (on a slow machine the relay is still publishing them now).
    await settledStart(observer);
    return { dep, workload, ledger, traffic, observer, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function settledStart(observer: Observer): Promise<void> {
  const deadline = Date.now() + 120_000;
  let why = '';
  for (;;) {
    const settled = await observer.settled(Math.max(1_000, deadline - Date.now()));
    if (settled.ok) {
      const t = await observer.tally().catch((err: Error) => err);
      if (t instanceof Error) why = `counting: ${t.message}`;
      else if (t.lost.alerts === 0 && t.lost.notifications === 0) return;
      else
        why = `${t.lost.alerts} alerts and ${t.lost.notifications} notifications owed at the start not yet seen: ${t.details.slice(0, 4).join('; ')}`;
    } else why = settled.why;
    if (Date.now() > deadline) throw new Error(`the deployment did not settle before the first cycle: ${why}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface Fault {
  /** The row's name in the results. */
  name: string;
  /** Does the damage and the repair (a restart); resolves when the repair is done. */
  inject(cycle: number): Promise<{ healedAt: number }>;
  /** Measure recovery from the repair (outages of a set length) instead of from the injection. */
  recoveryFrom?: 'injection' | 'heal';
  /** After recovery was measured: puts back what the fault left out (a killed leader). */
  afterRecovery?(cycle: number): Promise<void>;
  /** Fault-specific figures for the notes. */
  notes?(): string | undefined;
}

const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const diff = <T extends Record<string, number>>(a: T, b: T): Record<string, number> =>
  Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - b[k]!]));
const nonZero = (o: Record<string, number>) =>
  Object.entries(o)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');

async function tallyNow(observer: Observer): Promise<Tally> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await observer.tally();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

let cycleNumber = 0;
/** Crashes of each deployment already reported by an earlier cycle. */
const crashesReported = new Map<Deployment, number>();

/**
 * Runs `cycles` cycles of a fault under traffic: start the traffic, inject, wait for a fresh
 * round of acknowledgements after the repair and for everything acknowledged until then to take
 * effect (the recovery time), stop the traffic, let the pipeline settle, then count what was lost
 * or duplicated since the previous cycle and check that no process crashed.
 */
export async function runFault(suite: Suite, fault: Fault, cycles = cyclesPerFault): Promise<{ row: ResultRow; failures: string[] }> {
  const { dep, ledger, traffic, observer, workload } = suite;
  const subjects = [...workload.heartbeats, workload.triggerId];
  const roundSince = (t: number) => subjects.every((s) => (ledger.latest.get(s)?.sentAt ?? -Infinity) >= t);
  const recoveries: number[] = [];
  const failures: string[] = [];
  const first = await tallyNow(observer);
  const refusedBefore = sum(Object.fromEntries(ledger.refusals));
  let before = first;
  let lost = 0;
  let duplicated = 0;
  let reported = 0;

  for (let c = 1; c <= cycles; c++) {
    const n = ++cycleNumber;
    const label = `${fault.name}, cycle ${c}`;
    const cycleStart = Date.now();
    const phases: string[] = [];
    let mark = cycleStart;
    const phase = (name: string) => {
      phases.push(`${name} ${((Date.now() - mark) / 1000).toFixed(1)}`);
      mark = Date.now();
    };
    let recoveredMs: number | undefined;
    traffic.start(n);
    try {
      await ledger.until(() => roundSince(cycleStart), 'traffic before the fault', 60_000);
      phase('warm');
      const injectedAt = Date.now();
      const { healedAt } = await fault.inject(c);
      await ledger.until(() => roundSince(healedAt), 'a ping of every heartbeat and a trigger call acknowledged after the repair', 180_000);
      await observer.caughtUp(Date.now(), healedAt, 180_000);
      recoveredMs = Date.now() - (fault.recoveryFrom === 'heal' ? healedAt : injectedAt);
      recoveries.push(recoveredMs);
    } catch (err) {
      failures.push(`${label}: ${(err as Error).message}`);
    }
    try {
      await fault.afterRecovery?.(c);
    } catch (err) {
      failures.push(`${label}: after recovery: ${(err as Error).message}`);
    }
    phase('fault+recovery');
    await traffic.stop();
    phase('stop');
    const settled = await observer.settled(240_000);
    phase('settle');
    if (!settled.ok) failures.push(`${label}: the pipeline did not settle: ${settled.why}`);
    const mismatches = await observer.heartbeatMismatches().catch((err: Error) => [`reading heartbeats: ${err.message}`]);
    lost += mismatches.length;
    failures.push(...mismatches.map((m) => `${label}: ${m}`));
    const after = await tallyNow(observer);
    phase('count');
    const l = diff(after.lost, before.lost);
    const d = diff(after.duplicated, before.duplicated);
    // An item an earlier cycle counted as lost that turned up since stays lost (it came after
    // the settle window); it is reported, not subtracted.
    const late = Object.fromEntries(
      Object.entries(l)
        .filter(([, v]) => v < 0)
        .map(([k, v]) => [k, -v]),
    );
    for (const k of Object.keys(late)) l[k] = 0;
    if (sum(late) !== 0) failures.push(`${label}: turned up after an earlier cycle counted them lost: ${nonZero(late)}`);
    lost += sum(l);
    duplicated += sum(d);
    if (sum(l) !== 0) failures.push(`${label}: lost ${nonZero(l)}`);
    if (sum(d) !== 0) failures.push(`${label}: duplicated ${nonZero(d)}`);
    const newDetails = after.details.filter((x) => !before.details.includes(x));
    if (newDetails.length > 0) failures.push(`${label}: ${newDetails.slice(0, 8).join('; ')}`);
    const crashes = crashReport(dep);
    failures.push(...crashes.slice(crashesReported.get(dep) ?? 0).map((c) => `${label}: ${c}`));
    crashesReported.set(dep, crashes.length);
    failures.push(...traffic.problems.splice(0).map((p) => `${label}: ${p}`));
    before = after;
    for (const f of failures.slice(reported)) process.stderr.write(`  ! ${f.slice(0, 4_000)}\n`);
    reported = failures.length;
    process.stderr.write(
      `  ${label}: recovered in ${recoveredMs === undefined ? '(failed)' : `${recoveredMs} ms`}, ` +
        `lost ${sum(l)}, duplicated ${sum(d)}, ${Math.round((Date.now() - cycleStart) / 1000)} s (${phases.join(', ')})\n`,
    );
  }

  const acked = diff(before.acked, first.acked);
  const refused = sum(Object.fromEntries(ledger.refusals)) - refusedBefore;
  const inFlight = before.checksInFlightAtKill - first.checksInFlightAtKill;
  const extra = fault.notes?.();
  const notes = [
    `acknowledged: ${acked.pings} pings, ${acked.triggers} trigger calls, ${acked.checks} checks answered, ${acked.notices} status page incidents published; ${acked.alerts} alerts owed; ${acked.steps} alert steps (reminders, escalations) taken`,
    `${refused} requests refused (retried)`,
    inFlight > 0 ? `${inFlight} checks in flight in the killed agent (never acknowledged, not counted as lost)` : '',
    before.redeliveries > first.redeliveries
      ? `${before.redeliveries - first.redeliveries} notifications re-sent under the same Idempotency-Key`
      : '',
    before.republishedEvents > first.republishedEvents
      ? `${before.republishedEvents - first.republishedEvents} events republished under the same id`
      : '',
    extra ?? '',
    failures.length > 0 ? `${failures.length} failed checks` : '',
  ].filter(Boolean);
  return {
    row: { fault: fault.name, cycles, recovery_ms: p50max(recoveries), lost, duplicated, notes: notes.join('; ') },
    failures,
  };
}
