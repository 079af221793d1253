/**
 * Maintenance windows at idle: what 100,000 monitors with 10,000 windows cost the boundary worker
 * and Postgres while nothing is due, against the same worker with no window at all; and how fast
 * a burst of windows starting in the same second is recorded.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { startBoundaryWorker, type BoundaryWorker } from '../../control-plane/src/maintenance/boundaries.ts';
import { systemClock } from '../../control-plane/src/platform/clock.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { benchDatabase, benchLog, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { round, sig, summarize } from '../lib/stats.ts';

const idleGoalPercent = 1;
const burstGoalMs = 1_000;

/** CPU time (µs) so far of this database's server processes (/proc; known when Postgres runs here). */
async function serverCpu(sql: Sql): Promise<Map<number, number> | undefined> {
  const pids = ((await sql`select pid from pg_stat_activity where datname = current_database()`) as unknown as { pid: number }[]).map(
    (r) => r.pid,
  );
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(pid, (Number(f[11]) + Number(f[12])) * 10_000);
    } catch {
      return undefined;
    }
  }
  return out;
}

const transactions = async (sql: Sql) =>
  Number(
    (
      (await sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`) as unknown as [
        { n: string },
      ]
    )[0].n,
  );

/** A worker idle for `ms`: its CPU, the database's CPU and the transactions it ran meanwhile. */
async function idle(sql: Sql, ms: number) {
  const pg0 = await serverCpu(sql);
  const tx0 = await transactions(sql);
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, ms));
  const cpu = process.cpuUsage(cpu0);
  const tx1 = await transactions(sql);
  const pg1 = await serverCpu(sql);
  const pgUs = pg0 && pg1 ? [...pg1].reduce((t, [pid, us]) => t + us - (pg0.get(pid) ?? 0), 0) : null;
  // Two statements of this function itself (the counts) are in the difference.
  return { processUs: cpu.user + cpu.system, pgUs, transactions: tx1 - tx0 - 1 };
}

/** Monitors and windows of one project, written with generate_series: a realistic mix of kinds, zones and scopes. */
async function fill(sql: Sql, projectId: string, monitors: number, windows: number) {
  await sql`
    insert into monitors (project_id, name, url, valid_http_codes, active)
    select ${projectId}, 'm' || i, 'https://m' || i || '.example', '{200}', true from generate_series(1, ${monitors}) as i`;
  await sql`
    insert into heartbeats (project_id, name, grace_period) select ${projectId}, 'h' || i, 300 from generate_series(1, ${Math.max(1, monitors / 100)}) as i`;
  // A third one-off (some ahead, some over), two thirds recurring in five zones; a third of each
  // covers the whole project, the others 10 monitors or 3 heartbeats.
  await sql`
    with m as (select array_agg(id) as ids from (select id from monitors where project_id = ${projectId} order by random() limit 1000) x),
      h as (select array_agg(id) as ids from heartbeats where project_id = ${projectId})
    insert into maintenance_windows (project_id, name, starts_at, ends_at, cron, duration_seconds, timezone, whole_project,
      monitor_ids, heartbeat_ids, active, next_boundary_at)
    select ${projectId}, 'w' || i,
      case when i % 3 = 0 then now() + (i % 200 - 20) * interval '1 hour' end,
      case when i % 3 = 0 then now() + (i % 200 - 18) * interval '1 hour' end,
      case when i % 3 <> 0 then (i % 60) || ' ' || (i % 24) || ' * * ' || (i % 7) end,
      case when i % 3 <> 0 then 1800 + (i % 8) * 900 end,
      (array['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'])[1 + i % 5],
      i % 3 = 1,
      case when i % 3 = 2 then m.ids[1 + (i % 99) * 10 : 10 + (i % 99) * 10] else '{}' end,
      case when i % 3 = 0 then h.ids[1 : 3] else '{}' end,
      true, now()
    from generate_series(1, ${windows}) as i, m, h`;
}

await runPart('maintenance', 'Maintenance windows at idle', async (ctx) => {
  const q = ctx.quick;
  const size = q
    ? { monitors: 10_000, windows: 1_000, idleMs: 15_000, burst: 200 }
    : { monitors: 100_000, windows: 10_000, idleMs: 60_000, burst: 1_000 };
  const adminUrl = await postgresServer(ctx);
  const loaded = await benchDatabase(ctx, adminUrl);
  const empty = await benchDatabase(ctx, adminUrl);
  const owner = await createUser(loaded.sql, { email: 'ops@bench.test', password: 'a long bench password' });
  const t0 = performance.now();
  await fill(loaded.sql, owner.project_id, size.monitors, size.windows);
  const fillS = round((performance.now() - t0) / 1000, 1);
  ctx.log(`${size.monitors} monitors and ${size.windows} windows written in ${fillS} s`);

  const workers: BoundaryWorker[] = [];
  ctx.cleanup(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  const start = (sql: Sql) => {
    const w = startBoundaryWorker({ sql, log: benchLog, clock: systemClock });
    workers.push(w);
    return w;
  };

  // Every window starts due (as after a write): the worker steps each to its next boundary once.
  const settle0 = performance.now();
  const worker = start(loaded.sql);
  for (;;) {
    const [{ n }] = (await loaded.sql`select count(*)::int as n from maintenance_windows where next_boundary_at <= now()`) as unknown as [
      { n: number },
    ];
    if (n === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const settleMs = performance.now() - settle0;
  const [{ running }] =
    (await loaded.sql`select count(*)::int as running from maintenance_windows where active_until is not null`) as unknown as [
      { running: number },
    ];
  await new Promise((r) => setTimeout(r, 2_000));

  ctx.log(`idle with ${size.windows} windows for ${size.idleMs / 1000} s`);
  const withWindows = await idle(loaded.sql, size.idleMs);
  start(empty.sql);
  await new Promise((r) => setTimeout(r, 2_000));
  await worker.stop();
  workers.splice(workers.indexOf(worker), 1);
  ctx.log(`idle with no window for ${size.idleMs / 1000} s`);
  const without = await idle(empty.sql, size.idleMs);

  // A burst: windows created now that all start at the same second, 3 s ahead.
  const burstWorker = start(loaded.sql);
  const at = new Date(Math.ceil((Date.now() + 3_000) / 1000) * 1000);
  await loaded.sql`
    insert into maintenance_windows (project_id, name, starts_at, ends_at, timezone, whole_project, monitor_ids, heartbeat_ids, active, next_boundary_at)
    select ${owner.project_id}, 'burst ' || i, ${at}, ${at}::timestamptz + interval '1 hour', 'UTC', true, '{}', '{}', true, now()
    from generate_series(1, ${size.burst}) as i`;
  await loaded.sql`select pg_notify('maintenance_changed', '')`;
  const deadline = Date.now() + 60_000;
  let lags: number[] = [];
  while (Date.now() < deadline) {
    const rows = (await loaded.sql`
      select (extract(epoch from o.created_at) * 1000)::float8 as recorded from outbox_events o
      where o.kind = 'maintenance.started' and o.payload #>> '{subject,name}' like 'burst %'`) as unknown as { recorded: number }[];
    lags = rows.map((r) => r.recorded - at.getTime());
    if (lags.length >= size.burst) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await burstWorker.stop();
  workers.splice(workers.indexOf(burstWorker), 1);
  const burst = summarize(lags.sort((a, b) => a - b));

  const pct = (us: number) => (100 * us) / (size.idleMs * 1000);
  const added = withWindows.processUs + (withWindows.pgUs ?? 0) - (without.processUs + (without.pgUs ?? 0));
  ctx.method.push(
    `Data: ${size.monitors.toLocaleString('en')} monitors, ${(size.monitors / 100).toLocaleString('en')} heartbeats and ${size.windows.toLocaleString('en')} maintenance windows in one project, written with generate_series in ${fillS} s: a third one-off (some ahead, some over, some running), two thirds recurring (cron at varied minutes, hours and weekdays, 30 to 135 minutes each) in five IANA zones; a third cover the whole project, the others 10 monitors or 3 heartbeats.`,
    `The boundary worker (\`startBoundaryWorker\`, control-plane/src/maintenance/boundaries.ts, as the notify role runs it) first steps every window to its next boundary (they are all written due), then sleeps until the earliest one. Idle: its process CPU (process.cpuUsage) and the database's server processes' CPU (/proc) over ${size.idleMs / 1000} s, and the transactions the database ran meanwhile (pg_stat_database). Baseline: the same worker on a database with no window.`,
    `Burst: ${size.burst.toLocaleString('en')} one-off windows written together, all starting at the same second 3 s ahead; lag = when each maintenance.started was recorded in the outbox − the start.`,
  );
  ctx.figures.push(
    { metric: 'Windows stepped to their next boundary at start', value: size.windows, unit: 'windows' },
    { metric: 'Time to step them', value: round(settleMs / 1000, 2), unit: 's' },
    { metric: 'Windows in progress after it', value: running, unit: 'windows' },
    {
      metric: 'Idle CPU of the worker process',
      value: sig(pct(withWindows.processUs)),
      unit: '% of a core',
      baseline: { label: 'no window', value: sig(pct(without.processUs)) },
    },
    {
      metric: 'Idle CPU of Postgres for it',
      value: withWindows.pgUs === null ? null : sig(pct(withWindows.pgUs)),
      unit: '% of a core',
      baseline: { label: 'no window', value: without.pgUs === null ? null : sig(pct(without.pgUs)) },
    },
    {
      metric: `Transactions while idle (${size.idleMs / 1000} s)`,
      value: withWindows.transactions,
      unit: 'transactions',
      baseline: { label: 'no window', value: without.transactions },
    },
    { metric: `Burst of ${size.burst} starts recorded, p50`, value: round(burst.p50), unit: 'ms' },
    { metric: `Burst of ${size.burst} starts recorded, p99`, value: round(burst.p99), unit: 'ms' },
    { metric: 'Burst starts recorded', value: lags.length, unit: 'windows' },
  );
  ctx.goals.push(
    {
      goal: `${size.windows.toLocaleString('en')} windows over ${size.monitors.toLocaleString('en')} monitors add under ${idleGoalPercent} % of a core at idle (worker and Postgres)`,
      actual: `${sig(pct(added))} % added`,
      met: pct(added) < idleGoalPercent,
      ...(pct(added) < idleGoalPercent ? {} : { shortfall: `${sig(pct(added) - idleGoalPercent)} points over` }),
    },
    {
      goal: `${size.burst.toLocaleString('en')} windows starting in the same second recorded within ${burstGoalMs} ms (p99)`,
      actual: lags.length < size.burst ? `${lags.length} of ${size.burst} recorded within 60 s` : `p99 ${round(burst.p99)} ms`,
      met: lags.length >= size.burst && burst.p99 < burstGoalMs,
    },
  );
});
