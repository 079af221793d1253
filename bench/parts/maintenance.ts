/**
 * Part 10, maintenance windows: what 10,000 windows over 100,000 monitors add to the boundary
 * worker and its Postgres backends at idle, against the same worker with no window (and against
 * a worker that evaluates every window every second); and how soon a thousand windows that start
 * at the same instant are recorded as started.
 */
import { performance } from 'node:perf_hooks';
import { arrayLiteral, createSql } from '../../control-plane/src/platform/db/sql.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { trackBackends } from '../lib/backends.ts';
import { startScript, type Service } from '../lib/child.ts';
import { benchDatabase, benchLog, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { round, sig, summarize } from '../lib/stats.ts';
import { boundariesBetween, burstWindows, fillProjects, insertWindows, mixShares, windowMix, zones } from './maintenance-setup.ts';
import type { Handed, WorkerArgs, WorkerCpu } from './maintenance-worker.ts';

/** Added CPU at idle, in % of one core. */
const goalShare = 1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const n = (v: number) => v.toLocaleString('en');

/** Polls `ok` every 50 ms; false when it did not come true within limitMs. */
async function until(ok: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (!(await ok())) {
    if (performance.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

await runPart('maintenance', 'Maintenance windows', async (ctx) => {
  const q = ctx.quick;
  const scale = { projects: q ? 20 : 100, monitorsPerProject: 1_000, heartbeatsPerProject: 100 };
  const monitors = scale.projects * scale.monitorsPerProject;
  const heartbeats = scale.projects * scale.heartbeatsPerProject;
  const windows = q ? 2_000 : 10_000;
  const burst = q ? 200 : 1_000;
  // Cron windows start on a whole minute: the quick run does not wait for one.
  const burstRecurring = !q;
  const idleS = q ? 10 : 60;
  // The take-in grows the heap; V8 gives the memory back some 30 s later, with a full collection
  // of some tens of milliseconds that belongs to the take-in, not to idle.
  const settleS = 60;
  const scanS = q ? 5 : 20;

  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const a = await benchDatabase(ctx, adminUrl);
  const b = await benchDatabase(ctx, adminUrl);
  const { nc, namespace, names } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });
  const admin = createSql(adminUrl, { log: benchLog, max: 1, applicationName: 'uptime-bench-admin' });
  ctx.cleanup(() => admin.end({ timeout: 5 }));

  const filled = performance.now();
  const subjects = await fillProjects(a.sql, scale);
  await fillProjects(b.sql, scale);
  const writtenAt = Date.now();
  const defs = windowMix(subjects, windows, writtenAt);
  await insertWindows(a.sql, defs, writtenAt);
  const upcoming = boundariesBetween(defs, writtenAt, writtenAt + 86_400_000);
  ctx.log(
    `wrote ${n(monitors)} monitors, ${n(heartbeats)} heartbeats (twice) and ${n(windows)} windows in ${round((performance.now() - filled) / 1000, 1)} s; ${n(upcoming.length)} boundaries in the next 24 h`,
  );

  const start = async (label: string, mode: WorkerArgs['mode'], databaseUrl: string) => {
    const args: WorkerArgs = { mode, databaseUrl, natsUrl, namespace, app: `uptime-bench-${label}` };
    const s = await startScript<{ pid: number }>('parts/maintenance-worker.ts', [JSON.stringify(args)], { timeoutMs: 60_000, label });
    ctx.cleanup(() => s.stop());
    return s;
  };
  const cpuOf = (s: Service<unknown>) => s.request<WorkerCpu>({ op: 'cpu' });
  const dueNow = async () =>
    (await a.sql<{ n: number }[]>`select count(*)::int as n from maintenance_windows where next_boundary_at <= now()`)[0]!.n;

  // The worker on the windows takes them in (looks at each once, starting the runs in progress),
  // as a process does after they were all written; the same worker on no window starts with it.
  const apps = { ours: 'uptime-bench-ours', none: 'uptime-bench-none' };
  const [ours, none] = await Promise.all([start('ours', 'worker', a.url), start('none', 'worker', b.url)]);
  const takeInFrom = performance.now();
  if (!(await until(async () => (await dueNow()) === 0, 600_000))) throw new Error(`${windows} windows not taken in within 600 s`);
  const takeInS = (performance.now() - takeInFrom) / 1000;
  const [state] = await a.sql<{ running: number; armed: number; events: number }[]>`
    select count(*) filter (where active_until is not null)::int as running, count(*) filter (where next_boundary_at is not null)::int as armed,
      (select count(*)::int from outbox_events where kind = 'maintenance.started') as events
    from maintenance_windows`;
  ctx.log(`take-in: ${round(takeInS, 1)} s; ${state!.running} runs in progress, ${state!.armed} windows with a next boundary`);
  // As autovacuum would leave them, so that it does not run while idle CPU is measured.
  await a.sql`vacuum analyze`;
  await b.sql`vacuum analyze`;

  // Idle: both side by side over the same period.
  await sleep(settleS * 1000);
  const idleBackends = trackBackends(admin, Object.values(apps));
  await idleBackends.start();
  const [o0, z0] = await Promise.all([cpuOf(ours), cpuOf(none)]);
  const idleFrom = performance.now();
  await sleep(idleS * 1000);
  const [o1, z1] = await Promise.all([cpuOf(ours), cpuOf(none)]);
  const periodS = (performance.now() - idleFrom) / 1000;
  const pg = await idleBackends.stop();
  await none.stop();
  const perMin = (us: number) => us / 1000 / (periodS / 60); // CPU ms a minute
  const idle = {
    ours: {
      proc: perMin(o1.cpuUs - o0.cpuUs),
      pg: perMin(pg[apps.ours]!.cpuUs),
      statements: ((o1.statements - o0.statements) * 60) / periodS,
    },
    none: {
      proc: perMin(z1.cpuUs - z0.cpuUs),
      pg: perMin(pg[apps.none]!.cpuUs),
      statements: ((z1.statements - z0.statements) * 60) / periodS,
    },
  };
  const idleEvents = o1.events - o0.events;
  const addedMsPerMin = idle.ours.proc + idle.ours.pg - (idle.none.proc + idle.none.pg);
  const addedShare = addedMsPerMin / 600; // 600 ms a minute is 1% of one core
  ctx.log(
    `idle ${round(periodS, 1)} s: process ${round(idle.ours.proc, 2)} vs ${round(idle.none.proc, 2)} ms/min, backends ${round(idle.ours.pg, 2)} vs ${round(idle.none.pg, 2)} ms/min, ${round(idle.ours.statements, 1)} vs ${round(idle.none.statements, 1)} statements/min; ${idleEvents} events; added ${sig(addedShare)}% of a core`,
  );

  // Burst: windows written now that all start at one instant, clear of the other windows' boundaries.
  const clear = (t: number) => !upcoming.some((x) => Math.abs(x - t) <= 5_000);
  const step = burstRecurring ? 60_000 : 1_000;
  let at = Math.ceil((Date.now() + (burstRecurring ? 15_000 : 5_000)) / step) * step;
  for (let i = 0; i < 60 && !clear(at); i++) at += step;
  const burstIds = new Set<string>();
  const arrivals = new Map<string, number>();
  const sub = nc.subscribe(`${namespace}.events.*.maintenance.started`, {
    callback: (_err, msg) => {
      const t = Date.now();
      const id = (msg.json() as { subject?: { id?: string } }).subject?.id;
      if (id !== undefined && burstIds.has(id) && !arrivals.has(id)) arrivals.set(id, t);
    },
  });
  ctx.cleanup(() => sub.unsubscribe());
  const burstWrittenAt = Date.now();
  for (const id of await insertWindows(a.sql, burstWindows(subjects, burst, burstWrittenAt, at, burstRecurring), burstWrittenAt))
    burstIds.add(id);
  const idList = arrayLiteral([...burstIds]);
  const takenIn = await until(
    async () =>
      (
        await a.sql<{ n: number }[]>`
          select count(*)::int as n from maintenance_windows where id = any(${idList}::uuid[]) and next_boundary_at <= ${new Date(burstWrittenAt)}`
      )[0]!.n === 0,
    at - Date.now() - 1_500,
  );
  const [{ armed, others }] = (await a.sql`
    select count(*) filter (where id = any(${idList}::uuid[]) and next_boundary_at = ${new Date(at)})::int as armed,
      count(*) filter (where id <> all(${idList}::uuid[]) and next_boundary_at between ${new Date(at - 5_000)} and ${new Date(at + 5_000)})::int as others
    from maintenance_windows`) as unknown as [{ armed: number; others: number }];
  const aheadS = (at - Date.now()) / 1000;
  ctx.log(`burst: ${armed} of ${burst} windows armed for ${new Date(at).toISOString()}, ${round(aheadS, 1)} s ahead`);

  await sleep(at - 1_000 - Date.now());
  const burstBackends = trackBackends(admin, [apps.ours]);
  await burstBackends.start();
  const c0 = await cpuOf(ours);
  await until(async () => arrivals.size >= armed, at + 60_000 - Date.now());
  const c1 = await cpuOf(ours);
  const burstPg = (await burstBackends.stop())[apps.ours]!;
  sub.unsubscribe();
  const handed = (await ours.request<Handed[]>({ op: 'events' })).filter((h) => h.kind === 'maintenance.started' && burstIds.has(h.window));
  const recorded = summarize(handed.map((h) => h.at - at));
  const published = summarize([...arrivals.values()].map((t) => t - at));
  const started = Math.max(1, handed.length);
  const perStart = { proc: (c1.cpuUs - c0.cpuUs) / started, pg: burstPg.cpuUs / started };
  const perStartUs = perStart.proc + perStart.pg;
  const [check] = (await a.sql`
    select (select count(*)::int from outbox_events where kind = 'maintenance.started' and payload #>> '{subject,id}' = any(${idList}::text[])) as events,
      (select count(*)::int from maintenance_occurrences where window_id = any(${idList}::uuid[]) and starts_at = ${new Date(at)}) as occurrences`) as unknown as [
    { events: number; occurrences: number },
  ];
  ctx.log(
    `burst: recorded p50 ${round(recorded.p50)} p99 ${round(recorded.p99)} max ${round(recorded.max)} ms; on EVENTS p50 ${round(published.p50)} p99 ${round(published.p99)} ms; ${round(perStartUs)} µs CPU per start`,
  );
  await ours.stop();
  await a.sql`delete from maintenance_windows where id = any(${idList}::uuid[])`;

  // Without the index: every window read and evaluated every second.
  const scan = await start('scan', 'scan', a.url);
  await sleep(2_000);
  const scanBackends = trackBackends(admin, ['uptime-bench-scan']);
  await scanBackends.start();
  const s0 = await cpuOf(scan);
  const scanFrom = performance.now();
  await sleep(scanS * 1000);
  const s1 = await cpuOf(scan);
  const scanPeriodS = (performance.now() - scanFrom) / 1000;
  const scanPg = (await scanBackends.stop())['uptime-bench-scan']!;
  await scan.stop();
  const scanMsPerMin = (s1.cpuUs - s0.cpuUs + scanPg.cpuUs) / 1000 / (scanPeriodS / 60);
  const scans = s1.scans - s0.scans;
  ctx.log(`scan: ${round(scanMsPerMin)} ms/min, ${scans} scans in ${round(scanPeriodS, 1)} s`);

  const oursMsPerMin = idle.ours.proc + idle.ours.pg;
  const dayMsPerMin = (upcoming.length * perStartUs) / 1000 / (24 * 60);
  ctx.method.push(
    `${n(scale.projects)} projects with ${n(scale.monitorsPerProject)} monitors and ${scale.heartbeatsPerProject} heartbeats each (${n(monitors)} monitors, ${n(heartbeats)} heartbeats), and ${n(windows)} maintenance windows spread evenly over the projects, written with bulk SQL into the migrated schema as the API writes them (each to be looked at by the worker at the write's instant). Scope: ${mixShares.scope}; kind: ${mixShares.kinds}; ${mixShares.paused}; zones: ${zones.join(', ')}.`,
    `Two processes, started together: a boundary worker on those windows, and one on a database with the same projects, monitors and heartbeats and no window. The first takes the windows in (looks at each once; a run in progress starts: ${n(state!.running)} did); then the tables are vacuumed.`,
    `Idle: both measured over the same ${idleS} s, ${settleS} s after the take-in. Each runs \`startBoundaryWorker\` with the system clock and an outbox publisher, as the notify role starts it in a process that has one (the outbox's relay, which is the process's, is set apart). Process CPU: process.cpuUsage(). Postgres CPU: the backends of each process's connections (application_name in pg_stat_activity, read every 250 ms), from /proc/<pid>/schedstat. Statements: those each process's pool sent (postgres.js \`debug\` hook; begin and commit count as statements). Boundaries that come during the period are handled and counted, not avoided.`,
    `Burst: ${n(burst)} windows written at once, ${burstRecurring ? `half one-off, half a daily cron expression at that instant's local time in the ${zones.length} zones,` : 'one-off,'} all starting at the same instant T (${burstRecurring ? 'a whole minute' : 'a whole second'} with no other window's boundary within 5 s), ${round(aheadS, 1)} s after they were taken in. Recorded: when the worker handed each maintenance.started event to the outbox, right after its transaction committed, − T. On EVENTS: its arrival on a core subscription − T. CPU per start: the worker's process and its backends from T − 1 s to the last arrival, / starts.`,
    `Without the index: a process that reads every window (\`windowsOfProjects\`) every second and asks the rule (\`runAt\`) whether each is in a run, measured the same way over ${scanS} s.`,
    "A day's boundaries: those of the windows in the 24 h after they were written, by the rule the worker steps them with (`nextBoundary`), × the CPU per start of the burst, spread over the day: an estimate (a boundary that comes alone pays a transaction of its own; an end closes an occurrence instead of opening one).",
  );
  ctx.figures.push(
    {
      metric: 'Worker process CPU at idle',
      value: round(idle.ours.proc, 2),
      unit: 'ms/min',
      baseline: { label: 'no window', value: round(idle.none.proc, 2) },
      ratio: sig(idle.ours.proc / idle.none.proc),
    },
    {
      metric: "Its Postgres backends' CPU at idle",
      value: round(idle.ours.pg, 2),
      unit: 'ms/min',
      baseline: { label: 'no window', value: round(idle.none.pg, 2) },
      ratio: sig(idle.ours.pg / idle.none.pg),
    },
    {
      metric: 'Statements the worker sent to Postgres at idle',
      value: round(idle.ours.statements, 1),
      unit: '/min',
      baseline: { label: 'no window', value: round(idle.none.statements, 1) },
    },
    { metric: `Added CPU at idle: ${n(windows)} windows − none, process + backends`, value: round(addedMsPerMin, 2), unit: 'ms/min' },
    {
      metric: 'CPU at idle, process + backends',
      value: round(oursMsPerMin, 2),
      unit: 'ms/min',
      baseline: { label: 'every window evaluated every second', value: round(scanMsPerMin, 1) },
      ratio: sig(oursMsPerMin / scanMsPerMin),
    },
    { metric: 'Boundaries handled during the idle period', value: idleEvents, unit: 'events' },
    { metric: `Take-in of ${n(windows)} windows written at once`, value: round(takeInS, 1), unit: 's' },
    { metric: `maintenance.started recorded after T, ${n(burst)} windows, p50`, value: round(recorded.p50, 1), unit: 'ms' },
    { metric: `maintenance.started recorded after T, ${n(burst)} windows, p99`, value: round(recorded.p99, 1), unit: 'ms' },
    { metric: `maintenance.started recorded after T, ${n(burst)} windows, max`, value: round(recorded.max, 1), unit: 'ms' },
    { metric: 'maintenance.started on EVENTS after T, p50', value: round(published.p50, 1), unit: 'ms' },
    { metric: 'maintenance.started on EVENTS after T, p99', value: round(published.p99, 1), unit: 'ms' },
    {
      metric: 'maintenance.started missing (recorded / on EVENTS)',
      value: burst - handed.length,
      unit: '',
      baseline: { label: 'on EVENTS', value: burst - arrivals.size },
    },
    { metric: 'CPU per window started in the burst, process + backends', value: Math.round(perStartUs), unit: 'µs' },
    { metric: 'Boundaries of the windows in the 24 h after they were written', value: upcoming.length, unit: '' },
    { metric: "A day's boundaries at that cost, spread over the day (estimate)", value: round(dayMsPerMin, 2), unit: 'ms/min' },
  );
  const met = addedShare < goalShare;
  ctx.goals.push({
    goal: `Added CPU at idle under ${goalShare}% of one core (${goalShare * 600} ms a minute): the worker's process and its Postgres backends with ${n(windows)} windows over ${n(monitors)} monitors, against none`,
    actual: `${sig(addedShare, 2)}% (${round(addedMsPerMin, 2)} ms a minute)`,
    met,
    ...(met ? {} : { shortfall: `${round(addedShare / goalShare, 1)}x the limit` }),
  });

  ctx.notes.push(
    `In the ${round(periodS, 1)} s measured at idle the worker handled ${idleEvents} boundar${idleEvents === 1 ? 'y' : 'ies'} (events recorded); the windows have ${n(upcoming.length)} in a day, about ${round(upcoming.length / 1440, 1)} a minute on average, most on the hour or half hour.`,
    `Take-in: ${n(windows)} windows written in one go, looked at in ${round(takeInS, 1)} s (${n(state!.events)} maintenance.started events, ${n(state!.armed)} windows left with a next boundary).`,
  );
  ctx.notes.push(
    `Full collections during the idle period: ${o1.majorGcs - o0.majorGcs} in the worker on the windows, ${z1.majorGcs - z0.majorGcs} in the one on none.`,
  );
  const opened = pg[apps.ours]!.opened + pg[apps.none]!.opened;
  if (opened > 0)
    ctx.notes.push(
      `While idle the two processes opened ${opened} Postgres connection(s) (their backends' CPU counted from their start): the pool closes a connection idle for 60 s, about as long as the worker sleeps between its looks.`,
    );
  if (pg[apps.ours]!.backends === 0)
    ctx.notes.push('No backend of the worker was found in /proc: Postgres runs elsewhere, and its CPU is not counted.');
  if (!takenIn || armed < burst)
    ctx.notes.push(
      `Only ${armed} of the ${burst} burst windows were armed for T before it came (${takenIn ? 'all taken in' : 'take-in not finished'}).`,
    );
  if (others > 0) ctx.notes.push(`${others} other window(s) had a boundary within 5 s of T.`);
  if (check!.events !== handed.length || check!.occurrences !== handed.length)
    ctx.notes.push(
      `In Postgres after the burst: ${check!.events} maintenance.started events and ${check!.occurrences} occurrences of the burst windows starting at T, for ${handed.length} events handed to the outbox.`,
    );
  ctx.notes.push(
    `CPU per window started in the burst: ${Math.round(perStart.proc)} µs in the worker's process (the outbox's publishing included), ${Math.round(perStart.pg)} µs in its Postgres backends.`,
    `The baseline without the index ran ${scans} scans of the ${n(windows)} windows in ${round(scanPeriodS, 1)} s (one a second when it keeps up).`,
  );
});
