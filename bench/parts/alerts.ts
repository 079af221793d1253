/**
 * Part 11, alert delivery end to end: heartbeats whose grace runs out, detected by a deadline
 * process, routed and sent by a notify process (both `startControlPlane`, as
 * `uptime control-plane --roles ...` runs them), received by a webhook receiver on 127.0.0.1.
 * Measured from each event's occurred_at (the instant the grace ran out) to the receiver having
 * read the request: 1,000 state changes at one instant, 10,000 within one second, and whether
 * every delivery arrived exactly once.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { trackBackends } from '../lib/backends.ts';
import { startScript, type Service } from '../lib/child.ts';
import { statementTable } from '../lib/explain.ts';
import { benchDatabase, benchLog, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart, type PartContext } from '../lib/part.ts';
import { machineCpuTicks, pidsListeningOn, processCpuUs } from '../lib/proc.ts';
import type { ProfileSummary } from '../lib/profile.ts';
import { median, percentile, round, summarize } from '../lib/stats.ts';
import type { ProcessArgs, ProcessStats } from './alerts-process.ts';
import type { Receipt, ReceiverReady } from './alerts-receiver.ts';
import { expireAt, fillAlertProjects, recorded, type Recorded } from './alerts-setup.ts';

const goals = { p99Ms: 500, fanOutS: 30 };
const projects = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const n = (v: number) => v.toLocaleString('en');

type Scenario = 'simultaneous' | 'simultaneous-2k' | 'fan-out';

const withTotal = (parts: Record<string, number>) => ({
  ...parts,
  'the service in all': round(
    Object.values(parts).reduce((t, v) => t + v, 0),
    1,
  ),
});
type RunResult = {
  scenario: Scenario;
  alerts: number;
  /** Deliveries Postgres holds for the run's events (one per event and integration). */
  expected: number;
  events: number;
  received: number;
  distinct: number;
  lost: number;
  doubled: number;
  /** Deliveries not `delivered` in Postgres once everything was received. */
  unsettled: number;
  latency: ReturnType<typeof summarize> & { p95: number };
  /** Last receipt after the first grace ran out. */
  allWithinMs: number;
  /** Deliveries a second, from the first receipt to the last. */
  rate: number;
  stages: Record<string, { p50: number; p99: number }>;
  /** The service's processes, their Postgres backends and nats-server, and their sum. */
  cpuUsPerDelivery: Record<string, number>;
  /** The receiver's (the third party's), apart. */
  receiverCpuUsPerDelivery: number;
  machineBusy: number;
  load: number;
  statementsPerDelivery: Record<string, number>;
  profile?: ProfileSummary;
};

await runPart('alerts', 'Alert delivery', async (ctx: PartContext) => {
  const q = ctx.quick;
  const simultaneous = 1_000;
  const simultaneous2k = 2_000;
  const fanOut = q ? 2_000 : 10_000;
  const repeats = q ? 1 : 3;
  const warm: [count: number, spreadMs: number][] = [
    [simultaneous, 0],
    [q ? fanOut : 5_000, 1_000],
  ];
  const warmTotal = warm.reduce((t, [c]) => t + c, 0);
  // The full run profiles one more run of each scenario, not counted in the figures (the
  // profiler slows the process it samples).
  const profiled = !q;
  const perProject = Math.ceil((warmTotal + (repeats + (profiled ? 1 : 0)) * (simultaneous + simultaneous2k + fanOut)) / projects);

  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const db = await benchDatabase(ctx, adminUrl);
  const { namespace } = await benchNats(ctx, natsUrl);
  const admin = createSql(adminUrl, { log: benchLog, max: 1, applicationName: 'uptime-bench-admin' });
  ctx.cleanup(() => admin.end({ timeout: 5 }));

  const receiver = await startScript<ReceiverReady>('parts/alerts-receiver.ts', [], { timeoutMs: 30_000, label: 'receiver' });
  ctx.cleanup(() => receiver.stop());
  const secretKey = randomBytes(32).toString('base64url');
  const setupFrom = performance.now();
  const fill = await fillAlertProjects(db.sql, { projects, perProject, receiverUrl: receiver.ready.url, secretKey });
  ctx.log(`${projects} projects, ${n(fill.heartbeatIds.length)} heartbeats in ${round((performance.now() - setupFrom) / 1000, 1)} s`);

  const logDir = join(tmpdir(), `uptime-bench-alerts-${randomBytes(3).toString('hex')}`);
  ctx.cleanup(() => rmSync(logDir, { recursive: true, force: true }));
  const env = {
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_NAMESPACE: namespace,
    SECRET_KEY: secretKey,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
  const apps = { deadline: 'uptime-bench-deadline', notify: 'uptime-bench-notify' };
  const start = async (label: keyof typeof apps) => {
    const args: ProcessArgs = { roles: [label], app: apps[label], logFile: `${logDir}-${label}.log` };
    ctx.cleanup(() => rmSync(args.logFile, { force: true }));
    const s = await startScript<{ pid: number }>('parts/alerts-process.ts', [JSON.stringify(args)], { timeoutMs: 60_000, label, env });
    ctx.cleanup(() => s.stop());
    return s;
  };
  // BENCH_ALERTS_LAYOUT=one: both roles in one process, as `npm start` and `uptime control-plane`
  // without --roles run them (the notify process's figures are then the whole process's).
  const oneProcess = process.env.BENCH_ALERTS_LAYOUT === 'one';
  const startOne = async () => {
    const args: ProcessArgs = { roles: ['deadline', 'notify'], app: apps.notify, logFile: `${logDir}-one.log` };
    ctx.cleanup(() => rmSync(args.logFile, { force: true }));
    const s = await startScript<{ pid: number }>('parts/alerts-process.ts', [JSON.stringify(args)], {
      timeoutMs: 60_000,
      label: 'one',
      env,
    });
    ctx.cleanup(() => s.stop());
    return s;
  };
  if (oneProcess) ctx.notes.push('Run with BENCH_ALERTS_LAYOUT=one: the deadline and notify roles in one process.');
  const [deadline, notify] = oneProcess
    ? await startOne().then((s) => [s, s] as const)
    : await Promise.all([start('deadline'), start('notify')]);
  const stats = (s: Service<unknown>) => s.request<ProcessStats>({ op: 'stats' });
  // The nats-server this part talks to, not the others' on a shared machine.
  const natsPids = pidsListeningOn(Number(new URL(natsUrl).port || 4222));
  const natsCpuUs = () => natsPids.reduce((t, pid) => t + processCpuUs(pid), 0);

  let pending: Receipt[] = [];
  const take = async () => {
    const r = await receiver.request<{ receipts: Receipt[]; connections: number }>({ op: 'take' });
    pending.push(...r.receipts);
    return r.connections;
  };

  let next = 0;
  const slice = (count: number) => fill.heartbeatIds.slice(next, (next += count));

  const run = async (scenario: Scenario, count: number, profile: string | undefined): Promise<RunResult> => {
    const ids = slice(count);
    const spreadMs = scenario === 'fan-out' ? 1_000 : 0;
    // Far enough ahead for the deadline role to take the changes in (a notification per heartbeat).
    const at = Math.ceil((Date.now() + 3_000 + count * 0.5) / 1000) * 1000;
    await take();
    pending = [];
    await expireAt(db.sql, ids, at, spreadMs);
    await sleep(at - 500 - Date.now());
    const backends = trackBackends(admin, Object.values(apps));
    await backends.start();
    if (profile) await notify.request({ op: 'profile-start' });
    const before = {
      notify: await stats(notify),
      deadline: await stats(deadline),
      receiver: (await receiver.request<{ cpuUs: number }>({ op: 'cpu' })).cpuUs,
      nats: natsCpuUs(),
      machine: machineCpuTicks(),
    };
    // Until every heartbeat's delivery arrived, or a limit well past the goal.
    const limit = at + spreadMs + (q ? 60_000 : 120_000);
    const arrived = new Set<string>();
    while (Date.now() < limit) {
      await sleep(250);
      await take();
      for (const r of pending) arrived.add(r.delivery);
      if (arrived.size >= count) break;
    }
    const after = {
      notify: await stats(notify),
      deadline: await stats(deadline),
      receiver: (await receiver.request<{ cpuUs: number }>({ op: 'cpu' })).cpuUs,
      nats: natsCpuUs(),
      machine: machineCpuTicks(),
    };
    const summary = profile ? await notify.request<ProfileSummary | null>({ op: 'profile-stop', name: profile }) : null;
    const pg = await backends.stop();
    const load = loadavg()[0]!;
    // A repeat would come after the claim's lease (60 s); what comes within a few seconds is seen.
    await sleep(3_000);
    await take();

    const rec: Recorded = await recorded(db.sql, ids);
    const deliveries = new Map(rec.filter((r) => r.delivery).map((r) => [r.delivery!, r]));
    const byDelivery = new Map<string, Receipt[]>();
    for (const r of pending) byDelivery.set(r.delivery, [...(byDelivery.get(r.delivery) ?? []), r]);
    const ours = [...byDelivery].filter(([id]) => deliveries.has(id));
    const firsts = ours.map(([, rs]) => rs.reduce((a, b) => (a.at <= b.at ? a : b)));
    const latencies = firsts.map((r) => r.at - Date.parse(r.occurredAt));
    const sorted = Float64Array.from(latencies).sort();
    const s = summarize(latencies);
    const receiptOf = new Map(firsts.map((r) => [r.delivery, r.at]));
    const stage = (values: number[]) => {
      const v = Float64Array.from(values).sort();
      return { p50: round(percentile(v, 50), 1), p99: round(percentile(v, 99), 1) };
    };
    const withDelivery = rec.filter((r) => r.delivery && receiptOf.has(r.delivery));
    const stages = {
      'grace ran out → transition recorded (deadline role)': stage(rec.map((r) => r.recordedAt - r.occurredAt)),
      'recorded → delivery made (router)': stage(withDelivery.map((r) => r.routedAt! - r.recordedAt)),
      'delivery made → received (worker claim and send)': stage(withDelivery.map((r) => receiptOf.get(r.delivery!)! - r.routedAt!)),
      'received → recorded delivered (worker)': stage(
        withDelivery.filter((r) => r.deliveredAt).map((r) => r.deliveredAt! - receiptOf.get(r.delivery!)!),
      ),
    };
    const delivered = firsts.length;
    const per = (us: number) => round(us / Math.max(1, delivered), 1);
    const machineBusy = (after.machine.busy - before.machine.busy) / Math.max(1, after.machine.total - before.machine.total);
    const statements: Record<string, number> = {};
    for (const [k, v] of Object.entries(after.notify.statements)) {
      const d = v - (before.notify.statements[k] ?? 0);
      if (d > 0) statements[k] = round(d / Math.max(1, delivered), 3);
    }
    const events = new Set(rec.map((r) => r.event)).size;
    const heartbeats = new Set(rec.map((r) => r.heartbeat)).size;
    const times = firsts.map((r) => r.at);
    const first = Math.min(...times);
    const last = Math.max(...times);
    const result: RunResult = {
      scenario,
      alerts: count,
      expected: deliveries.size,
      events,
      received: ours.reduce((t, [, rs]) => t + rs.length, 0),
      distinct: ours.length,
      lost: deliveries.size - ours.length + rec.filter((r) => !r.delivery).length + (count - heartbeats),
      doubled: ours.reduce((t, [, rs]) => t + rs.length - 1, 0) + (events - heartbeats),
      unsettled: rec.filter((r) => r.status !== 'delivered').length,
      latency: { ...s, p95: percentile(sorted, 95) },
      allWithinMs: last - at,
      rate: (1000 * delivered) / Math.max(1, last - first),
      stages,
      cpuUsPerDelivery: withTotal({
        'notify process': per(after.notify.cpuUs - before.notify.cpuUs),
        ...(oneProcess ? {} : { 'deadline process': per(after.deadline.cpuUs - before.deadline.cpuUs) }),
        'Postgres backends of notify': per(pg[apps.notify]?.cpuUs ?? NaN),
        ...(oneProcess ? {} : { 'Postgres backends of deadline': per(pg[apps.deadline]?.cpuUs ?? NaN) }),
        'nats-server': per(after.nats - before.nats),
      }),
      receiverCpuUsPerDelivery: per(after.receiver - before.receiver),
      machineBusy,
      load,
      statementsPerDelivery: statements,
      ...(summary ? { profile: summary } : {}),
    };
    ctx.log(
      `${scenario} ${n(count)}: p50 ${round(s.p50)} p95 ${round(result.latency.p95)} p99 ${round(s.p99)} max ${round(s.max)} ms; all within ${round(result.allWithinMs / 1000, 2)} s at ${n(Math.round(result.rate))}/s; ${result.lost} lost, ${result.doubled} doubled, ${result.unsettled} unsettled; machine ${Math.round(machineBusy * 100)}% busy, load ${round(load)}`,
    );
    for (const [k, v] of Object.entries(stages)) ctx.log(`  ${k}: p50 ${v.p50} p99 ${v.p99} ms`);
    ctx.log(
      `  CPU µs/delivery: ${Object.entries(result.cpuUsPerDelivery)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; receiver ${result.receiverCpuUsPerDelivery}`,
    );
    return result;
  };

  // Warm-up, not measured: both shapes of the scenarios once (connections, the deadline role's
  // leases, statements prepared for batches that large, and code the JIT compiles only after
  // thousands of calls: after a warm-up of 1,000 alone, the first run still cost every process
  // two to three times the CPU per delivery of the next ones).
  for (const [count, spreadMs] of warm) {
    const ids = slice(count);
    const at = Math.ceil((Date.now() + 3_000 + count * 0.5) / 1000) * 1000;
    await take();
    pending = [];
    await expireAt(db.sql, ids, at, spreadMs);
    const arrived = new Set<string>();
    for (const limit = at + 90_000; arrived.size < count && Date.now() < limit;) {
      await sleep(250);
      await take();
      for (const r of pending) arrived.add(r.delivery);
    }
    if (arrived.size < count) throw new Error(`warm-up: ${arrived.size} of ${count} webhooks arrived within 90 s`);
    ctx.log(`warm-up: ${n(count)} webhooks arrived`);
  }

  const results: RunResult[] = [];
  for (let i = 0; i < repeats; i++) {
    results.push(await run('simultaneous', simultaneous, undefined));
    results.push(await run('simultaneous-2k', simultaneous2k, undefined));
    results.push(await run('fan-out', fanOut, undefined));
  }
  const profiles = profiled
    ? [
        await run('simultaneous', simultaneous, 'alerts-notify-simultaneous'),
        await run('simultaneous-2k', simultaneous2k, 'alerts-notify-simultaneous-2k'),
        await run('fan-out', fanOut, 'alerts-notify-fan-out'),
      ]
    : [];
  const connections = await take();
  const explained = (await stats(notify)).explained;
  if (explained) {
    ctx.notes.push(
      'BENCH_EXPLAIN=1: every statement of the notify process was explained (auto_explain, actual times): its figures are slowed by that.',
    );
    ctx.limits.push({
      title:
        "Postgres' execution time by statement of the notify process, every run together (auto_explain; commit's WAL flush not included)",
      text: statementTable(explained, 16),
    });
    ctx.log(statementTable(explained, 16));
  }

  const a = results.filter((r) => r.scenario === 'simultaneous');
  const b = results.filter((r) => r.scenario === 'fan-out');
  const c = results.filter((r) => r.scenario === 'simultaneous-2k');
  const spread = (rs: RunResult[], f: (r: RunResult) => number, digits = 0) => rs.map((r) => round(f(r), digits)).join(', ');
  const med = (rs: RunResult[], f: (r: RunResult) => number, digits = 0) => round(median(rs.map(f)), digits);
  const of = repeats > 1 ? ` (median of ${repeats} runs: ` : ' (';

  ctx.method.push(
    `${projects} projects, each with one active webhook integration (signed with a secret) to a receiver on 127.0.0.1 (a process of its own, node:http, answering 200 at once), and ${n(perProject)} heartbeats naming no integration, so each alert has one delivery.`,
    `${oneProcess ? 'One control-plane process with the deadline and notify roles (BENCH_ALERTS_LAYOUT=one; the "notify process" figures are the whole process)' : 'Two control-plane processes as `uptime control-plane --roles deadline` and `--roles notify` run them'} (\`startControlPlane\`, settings from the environment, pool of PG_POOL_SIZE, logs at info to a file), on the same Postgres database and NATS namespace. The heartbeats are made late the way an API update does (updated_at bumped: the change trigger tells the deadline role), their grace running out some seconds later.`,
    `Latency = the receiver having read the request − the event's occurred_at (the instant the grace ran out), for the first receipt of each delivery id. Scenario "simultaneous": ${n(simultaneous)} graces run out at the same millisecond, and in another ${n(simultaneous2k)}. Scenario "fan-out": ${n(fanOut)} run out spread evenly over one second; "all delivered within" is the last receipt − the first grace running out. ${repeats > 1 ? `Each scenario is run ${repeats} times on fresh heartbeats (spread given as the runs' values).` : 'One run of each.'} A warm-up runs first: ${warm.map(([c, ms]) => `${n(c)} alerts ${ms > 0 ? 'within one second' : 'at one instant'}`).join(', then ')}.${profiled ? ' One more run of each scenario is profiled (V8 CPU profile of the notify process, 1 kHz sampling) and not counted in the figures.' : ''}`,
    'Lost = deliveries Postgres made for the run that never reached the receiver, plus heartbeats with no down event; doubled = receipts of a delivery id beyond the first, plus second down events of a heartbeat, counted until 3 s after the last receipt (a crash is not part of this run; the reliability suite covers crashes).',
    'Stages come from Postgres timestamps, which are transaction starts: recorded = the outbox row of the transition, made = the delivery row, recorded delivered = delivered_at.',
    "CPU per delivery: each process's `process.cpuUsage()`, its Postgres backends (by application_name, from /proc), the nats-server listening on the NATS URL's port, over the window from 0.5 s before the first grace runs out to the last receipt. Statements = what the notify process's pool sent (postgres.js debug hook), per delivery.",
  );
  const figures = (label: string, rs: RunResult[]) => {
    ctx.figures.push(
      { metric: `${label}: p50${of}${spread(rs, (r) => r.latency.p50)} ms)`, value: med(rs, (r) => r.latency.p50), unit: 'ms' },
      { metric: `${label}: p95${of}${spread(rs, (r) => r.latency.p95)} ms)`, value: med(rs, (r) => r.latency.p95), unit: 'ms' },
      { metric: `${label}: p99${of}${spread(rs, (r) => r.latency.p99)} ms)`, value: med(rs, (r) => r.latency.p99), unit: 'ms' },
      { metric: `${label}: max${of}${spread(rs, (r) => r.latency.max)} ms)`, value: med(rs, (r) => r.latency.max), unit: 'ms' },
      {
        metric: `${label}: all delivered within, after the first grace ran out${of}${spread(rs, (r) => r.allWithinMs / 1000, 2)} s)`,
        value: med(rs, (r) => r.allWithinMs / 1000, 2),
        unit: 's',
      },
      {
        metric: `${label}: deliveries per second, first to last${of}${spread(rs, (r) => r.rate)})`,
        value: med(rs, (r) => r.rate),
        unit: '/s',
      },
      {
        metric: `${label}: machine busy while measured (both cores)${of}${spread(rs, (r) => r.machineBusy * 100)} %; load average ${spread(rs, (r) => r.load, 2)})`,
        value: med(rs, (r) => r.machineBusy * 100),
        unit: '%',
      },
    );
    for (const k of Object.keys(rs[0]!.cpuUsPerDelivery))
      ctx.figures.push({
        metric: `${label}: CPU per delivery, ${k}${of}${spread(rs, (r) => r.cpuUsPerDelivery[k]!)} µs)`,
        value: med(rs, (r) => r.cpuUsPerDelivery[k]!),
        unit: 'µs',
      });
    ctx.figures.push({
      metric: `${label}: CPU per delivery, the webhook receiver (not the service)${of}${spread(rs, (r) => r.receiverCpuUsPerDelivery)} µs)`,
      value: med(rs, (r) => r.receiverCpuUsPerDelivery),
      unit: 'µs',
    });
    const statements = rs.at(-1)!.statementsPerDelivery;
    ctx.figures.push({
      metric: `${label}: statements sent by the notify process per delivery (last run)`,
      value: round(
        Object.values(statements).reduce((t, v) => t + v, 0),
        2,
      ),
      unit: '',
    });
  };
  figures(`${n(simultaneous)} simultaneous`, a);
  figures(`${n(simultaneous2k)} simultaneous`, c);
  figures(`${n(fanOut)} in one second`, b);
  const every = [...results, ...profiles];
  const lost = every.reduce((t, r) => t + r.lost, 0);
  const doubled = every.reduce((t, r) => t + r.doubled, 0);
  const unsettled = every.reduce((t, r) => t + r.unsettled, 0);
  const total = every.reduce((t, r) => t + r.alerts, 0);
  ctx.figures.push(
    { metric: `Deliveries lost, all runs (${n(total)} alerts)`, value: lost, unit: '' },
    { metric: 'Deliveries doubled, all runs', value: doubled, unit: '' },
    { metric: 'Deliveries not recorded delivered in Postgres, all runs', value: unsettled, unit: '' },
    { metric: 'Connections the receiver accepted over the whole part', value: connections, unit: '' },
  );

  for (const r of profiles.length > 0 ? profiles : [a.at(-1)!, b.at(-1)!]) {
    const label =
      r.scenario === 'fan-out'
        ? `${n(fanOut)} in one second`
        : `${n(r.scenario === 'simultaneous' ? simultaneous : simultaneous2k)} simultaneous`;
    const which = r.profile
      ? `a run of its own, profiled (not counted above): p99 ${round(r.latency.p99)} ms, all within ${round(r.allWithinMs / 1000, 2)} s, notify process ${r.cpuUsPerDelivery['notify process']} µs of CPU per delivery`
      : 'last run';
    ctx.limits.push({
      title: `where an alert's time goes, ${label} (${which}; stages from Postgres timestamps and receipts)`,
      text: [
        '| stage | p50 ms | p99 ms |',
        '|---|---|---|',
        ...Object.entries(r.stages).map(([k, v]) => `| ${k} | ${v.p50} | ${v.p99} |`),
        '',
        '| statement sent by the notify process | per delivery |',
        '|---|---|',
        ...Object.entries(r.statementsPerDelivery)
          .sort((x, y) => y[1] - x[1])
          .slice(0, 14)
          .map(([k, v]) => `| \`${k.replace(/\|/g, '\\|')}\` | ${v} |`),
      ].join('\n'),
      ...(r.profile ? { profile: r.profile } : {}),
    });
  }

  const worstA = Math.max(...a.map((r) => r.latency.p99));
  const worstB = Math.max(...b.map((r) => r.allWithinMs)) / 1000;
  const aMet = worstA < goals.p99Ms && a.every((r) => r.lost === 0);
  const bMet = worstB <= goals.fanOutS && b.every((r) => r.lost === 0);
  const worstC = Math.max(...c.map((r) => r.latency.p99));
  const twoMet = worstC < goals.p99Ms && c.every((r) => r.lost === 0);
  const cMet = lost === 0 && doubled === 0 && unsettled === 0;
  ctx.goals.push(
    {
      goal: `${n(simultaneous)} simultaneous state changes: p99 under ${goals.p99Ms} ms from the state change to the webhook received${repeats > 1 ? ' (every run)' : ''}`,
      actual: `${spread(a, (r) => r.latency.p99)} ms`,
      met: aMet,
      ...(aMet ? {} : { shortfall: `${round(worstA / goals.p99Ms, 1)}x the limit` }),
    },
    {
      goal: `${n(simultaneous2k)} simultaneous misses: p99 under ${goals.p99Ms} ms from grace running out to the webhook receiver having read the request${repeats > 1 ? ' (every run)' : ''}`,
      actual: `${spread(c, (r) => r.latency.p99)} ms`,
      met: twoMet,
      ...(twoMet ? {} : { shortfall: `${round(worstC / goals.p99Ms, 1)}x the limit` }),
    },
    {
      goal: `${n(fanOut)} alerts in one second all delivered within ${goals.fanOutS} s${q ? ' (quick: the goal is for 10,000)' : ''}`,
      actual: `${spread(b, (r) => r.allWithinMs / 1000, 2)} s at ${spread(b, (r) => r.rate)} deliveries/s`,
      met: bMet,
      ...(bMet ? {} : { shortfall: `${round(worstB - goals.fanOutS, 1)} s over` }),
    },
    {
      goal: 'Nothing lost or doubled: every delivery id received exactly once, every delivery recorded delivered',
      actual: `${lost} lost, ${doubled} doubled, ${unsettled} not recorded delivered of ${n(total)}`,
      met: cMet,
    },
  );
  ctx.notes.push(
    `Load average (1 min) at the end: ${round(loadavg()[0]!, 2)}. The machine is shared: see the busy share of each scenario.`,
  );
});
