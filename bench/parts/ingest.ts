/**
 * Part 5, ingest and API: results/s written from RESULTS into Postgres by the ingest role against
 * a one-INSERT-per-result loop, and GET /monitors, GET /monitors/{id} latency with a large
 * history against a bare `select 1` round trip through the same pool.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createToken, createUser } from '../../control-plane/src/accounts/service.ts';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';
import { createOutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import { startIngest } from '../../control-plane/src/monitors/ingest/consumer.ts';
import { resultMsgId } from '../../shared/src/contracts/monitoring.ts';
import type { NatsConnection } from '../../shared/src/nats.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import type { Names } from '../../shared/src/subjects.ts';
import { createExplainingSql, statementTable } from '../lib/explain.ts';
import { benchDatabase, benchLog, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { profiled, type ProfileSummary } from '../lib/profile.ts';
import { publishWindowed } from '../lib/publish.ts';
import { round, sig } from '../lib/stats.ts';
import { latency, startApi } from './ingest-api.ts';
import { fillHistory, insertOneByOne, resultAt } from './ingest-data.ts';

const ingestGoal = 20_000;
const apiGoalMs = 10;

type IngestRun = { stored: number; wallMs: number; cpuUs: number; pgCpuUs?: number; load: number; profile?: ProfileSummary };

/**
 * CPU time (µs) so far of the database's server processes, read from /proc: known only when
 * Postgres runs on this machine. Processes that exit in between are not counted.
 */
async function serverCpu(sql: Sql): Promise<Map<number, number> | undefined> {
  const pids = ((await sql`select pid from pg_stat_activity where datname = current_database()`) as unknown as { pid: number }[]).map(
    (r) => r.pid,
  );
  const tick = 1e6 / 100; // USER_HZ
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(pid, (Number(f[11]) + Number(f[12])) * tick);
    } catch {
      return undefined;
    }
  }
  return out;
}

async function ingestBacklog(sql: Sql, nc: NatsConnection, names: Names, expected: number, limitMs: number): Promise<IngestRun> {
  const outbox = createOutboxPublisher({ sql, nc, names, log: benchLog });
  const pg0 = await serverCpu(sql);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const ingest = await startIngest({ sql, nc, names, log: benchLog, outbox });
  while (ingest.stats().stored < expected && performance.now() - t0 < limitMs) await new Promise((r) => setTimeout(r, 10));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const load = loadavg()[0]!;
  const pg1 = await serverCpu(sql);
  const { stored } = ingest.stats();
  await ingest.stop();
  outbox.stop();
  const pgCpuUs = pg0 && pg1 ? [...pg1].reduce((t, [pid, us]) => t + us - (pg0.get(pid) ?? 0), 0) : undefined;
  return { stored, wallMs, cpuUs: cpu.user + cpu.system, load, ...(pgCpuUs !== undefined ? { pgCpuUs } : {}) };
}

await runPart('ingest', 'Ingest and API', async (ctx) => {
  const q = ctx.quick;
  const size = q
    ? {
        monitors: 5_000,
        resultsPerMonitor: 10,
        incidentsPerMonitor: 2,
        ingestMonitors: 1_000,
        ingestResults: 10_000,
        naiveResults: 2_000,
        requests: 200,
        warmup: 30,
      }
    : {
        monitors: 100_000,
        resultsPerMonitor: 10,
        incidentsPerMonitor: 2,
        ingestMonitors: 10_000,
        ingestResults: 100_000,
        naiveResults: 10_000,
        requests: 2_000,
        warmup: 200,
      };
  const limitMs = q ? 60_000 : 120_000;
  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const db = await benchDatabase(ctx, adminUrl);
  const { nc, names, namespace } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });

  const big = await createUser(db.sql, { email: 'big@bench.test', password: 'a long bench password' });
  const small = await createUser(db.sql, { email: 'small@bench.test', password: 'a long bench password' });
  const bigToken = (await createToken(db.sql, big.user_id, 'bench', 'api')).token;
  const smallToken = (await createToken(db.sql, small.user_id, 'bench', 'api')).token;
  ctx.log(`filling ${size.monitors} monitors with 30 days of history`);
  const fill = await fillHistory(db.sql, big.project_id, size);
  await fillHistory(db.sql, small.project_id, { ...size, monitors: 100 });
  const [{ n: resultRows }] = (await db.sql`select count(*)::int as n from check_results`) as unknown as [{ n: number }];
  ctx.method.push(
    `Data: ${size.monitors.toLocaleString('en')} monitors in one project (plus a second tenant with 100), each with ${size.incidentsPerMonitor} incidents and ${size.resultsPerMonitor} results over the last 30 days (${resultRows.toLocaleString('en')} result rows), written with generate_series in ${fill.seconds} s. Full density (one result a minute) would be ${(size.monitors * 43_200).toLocaleString('en')} rows; the reads measured here take uptime from incidents, so result rows weigh only through the cache.`,
    `Ingest: ${size.ingestResults.toLocaleString('en')} results (${size.ingestMonitors.toLocaleString('en')} monitors × ${size.ingestResults / size.ingestMonitors} slots, all up) published to RESULTS first; then \`startIngest\` (control-plane/src/monitors/ingest/consumer.ts, the ingest role, its defaults: batches of up to 5,000, two written at once) is started and timed until it has stored them all. Baseline: ${size.naiveResults.toLocaleString('en')} results, one awaited INSERT each, through the same pool. CPU per result is read from the ingest process and, when Postgres runs on this machine, from /proc for the database's server processes.`,
    `API: \`buildApp\` on a loopback port, one keep-alive connection, ${size.requests.toLocaleString('en')} requests one after another after ${size.warmup} of warm-up, bearer token auth included: GET /monitors?per_page=25 (page 1) and GET /monitors/{id} for random ids. Baseline: \`select 1\` through the same pool, the same way.`,
  );

  const monitorIds = (
    (await db.sql`select id from monitors where project_id = ${big.project_id} order by created_at limit ${size.ingestMonitors}`) as unknown as {
      id: string;
    }[]
  ).map((r) => r.id);
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const publish = async (base: number, count: number) => {
    const p = await publishWindowed(
      nc,
      count,
      (i) => {
        const r = resultAt(monitorIds, base, i);
        return { subject: names.subjects.result('bench', r.monitor_id), payload: JSON.stringify(r), msgId: resultMsgId(r) };
      },
      512,
    );
    if (p.failed > 0) throw new Error(`${p.failed} results could not be published`);
  };
  await publish(minute - 3 * 3_600_000, size.ingestResults);
  const run = await ingestBacklog(db.sql, nc, names, size.ingestResults, limitMs);
  const rate = (run.stored * 1000) / run.wallMs;
  ctx.log(`ingest: ${run.stored} results in ${Math.round(run.wallMs)} ms = ${Math.round(rate)}/s`);
  if (run.stored < size.ingestResults)
    ctx.notes.push(`Ingest stored ${run.stored} of ${size.ingestResults} results within ${limitMs / 1000} s.`);
  const naiveMs = await insertOneByOne(
    db.sql,
    Array.from({ length: size.naiveResults }, (_, i) => resultAt(monitorIds, minute - 30 * 3_600_000, i)),
  );
  const naiveRate = (size.naiveResults * 1000) / naiveMs;
  ctx.log(`one INSERT per result: ${Math.round(naiveRate)}/s`);
  ctx.figures.push(
    {
      metric: 'Results stored per second',
      value: Math.round(rate),
      unit: 'results/s',
      baseline: { label: 'one INSERT per result', value: Math.round(naiveRate) },
      ratio: sig(rate / naiveRate),
    },
    { metric: 'Ingest process CPU per result', value: round(run.cpuUs / Math.max(1, run.stored), 1), unit: 'µs' },
    ...(run.pgCpuUs !== undefined
      ? [
          {
            metric: 'Postgres CPU per result (server processes of the database)',
            value: round(run.pgCpuUs / Math.max(1, run.stored), 1),
            unit: 'µs',
          },
        ]
      : []),
  );
  const ingestMet = rate >= ingestGoal;
  if (!ingestMet && run.pgCpuUs !== undefined) {
    const perResult = (run.cpuUs + run.pgCpuUs) / Math.max(1, run.stored);
    ctx.notes.push(
      `Ingest budget: ${round(run.cpuUs / Math.max(1, run.stored), 1)} µs in the ingest process plus ${round(run.pgCpuUs / Math.max(1, run.stored), 1)} µs in Postgres per result (NATS server not counted) is ${round(perResult, 1)} µs: ${round((perResult * ingestGoal) / 1e6, 2)} of the machine's ${cpus().length} cores at ${ingestGoal.toLocaleString('en')} results/s. Load average at the end of the run: ${round(run.load, 1)} (other processes included).`,
    );
  }
  ctx.goals.push({
    goal: `At least ${ingestGoal.toLocaleString('en')} results/s`,
    actual: `${Math.round(rate).toLocaleString('en')} results/s`,
    met: ingestMet,
    ...(ingestMet ? {} : { shortfall: `${Math.round((1 - rate / ingestGoal) * 100)}% short` }),
  });
  if (!ingestMet && !ctx.quick) {
    const again = Math.round(size.ingestResults / 4);
    await publish(minute - 6 * 3_600_000, again);
    const explaining = createExplainingSql(db.url);
    ctx.cleanup(() => explaining.sql.end({ timeout: 5 }));
    const { result: p, profile } = await profiled('ingest', () => ingestBacklog(explaining.sql, nc, names, again, limitMs));
    ctx.limits.push({
      title: `ingest at ${Math.round(rate).toLocaleString('en')} results/s: where the time goes`,
      text: `A second run (${p.stored.toLocaleString('en')} results) with every statement explained by auto_explain (so slower than the measured one): database time per statement, then the ingest process's CPU profile. The ingest process was busy ${Math.round(profile.busyMs)} ms of the run's ${Math.round(p.wallMs)} ms; the rest it waited for Postgres (one transaction per batch of up to 5,000, two at once) and NATS.\n\n${statementTable(explaining.statements())}\n\nPlan of the statement with the most time (its slowest call):\n\n\`\`\`\n${explaining.slowestPlan()}\n\`\`\``,
      profile,
    });
  }

  const api = await startApi({ url: db.url, natsUrl, namespace, sql: db.sql, nc, token: bigToken });
  ctx.cleanup(() => api.close());
  const allIds = ((await db.sql`select id from monitors where project_id = ${big.project_id}`) as unknown as { id: string }[]).map(
    (r) => r.id,
  );
  const pick = () => allIds[Math.floor(Math.random() * allIds.length)]!;
  const select1 = await latency(size.requests, size.warmup, () => db.sql`select 1`);
  const list = await latency(size.requests, size.warmup, () => api.request('/monitors?per_page=25'));
  const one = await latency(size.requests, size.warmup, () => api.request(`/monitors/${pick()}`));
  const smallList = await latency(size.requests, size.warmup, () => api.request('/monitors?per_page=25', smallToken));
  for (const [name, s] of [
    ['GET /monitors', list],
    ['GET /monitors/{id}', one],
    ['GET /monitors (small tenant)', smallList],
  ] as const) {
    if (s.count < size.requests) ctx.notes.push(`${name}: ${s.count} requests within the time limit of the series, not ${size.requests}.`);
  }
  ctx.log(
    `select 1 p99 ${round(select1.p99)} ms; list p99 ${round(list.p99)} ms; get p99 ${round(one.p99)} ms; small list p99 ${round(smallList.p99)} ms`,
  );
  const lat = (metric: string, s: typeof list, p: 'p50' | 'p99') => ({
    metric: `${metric} ${p}`,
    value: round(s[p], 2),
    unit: 'ms',
    baseline: { label: '`select 1` round trip', value: round(select1[p], 2) },
    ratio: sig(s[p] / select1[p], 1),
  });
  ctx.figures.push(
    lat(`GET /monitors (page of 25, ${size.monitors.toLocaleString('en')} in the project)`, list, 'p50'),
    lat(`GET /monitors (page of 25, ${size.monitors.toLocaleString('en')} in the project)`, list, 'p99'),
    lat('GET /monitors/{id}', one, 'p50'),
    lat('GET /monitors/{id}', one, 'p99'),
    lat('GET /monitors (page of 25, a tenant with 100 monitors)', smallList, 'p50'),
    lat('GET /monitors (page of 25, a tenant with 100 monitors)', smallList, 'p99'),
  );
  for (const [name, s, path] of [
    ['GET /monitors', list, '/monitors?per_page=25'],
    ['GET /monitors/{id}', one, undefined],
  ] as const) {
    const met = s.p99 <= apiGoalMs;
    ctx.goals.push({
      goal: `${name} p99 at most ${apiGoalMs} ms (${size.monitors.toLocaleString('en')} monitors)`,
      actual: `${round(s.p99, 2)} ms (${s.count} requests)`,
      met,
      ...(met ? {} : { shortfall: `${round(s.p99 / apiGoalMs, 1)}x the limit` }),
    });
    if (met || ctx.quick) continue;
    const explaining = createExplainingSql(db.url);
    ctx.cleanup(() => explaining.sql.end({ timeout: 5 }));
    const slowApi = await startApi({ url: db.url, natsUrl, namespace, sql: explaining.sql, nc, token: bigToken });
    const n = Math.max(50, Math.round(size.requests / 4));
    const { result: extra, profile } = await profiled(`api-${path ? 'list' : 'get'}`, () =>
      latency(n, 10, () => slowApi.request(path ?? `/monitors/${pick()}`), 30_000),
    );
    await slowApi.close();
    ctx.limits.push({
      title: `${name} at p99 ${round(s.p99, 1)} ms: where the time goes`,
      text: `${extra.count} more requests with every statement explained by auto_explain: database time per statement (bearer-token auth included), then the API process's CPU profile. Database time per request: ${round(explaining.statements().reduce((t, r) => t + r.totalMs, 0) / Math.max(1, extra.count), 2)} ms on average (auto_explain's timing included), of a request p50 of ${round(extra.p50, 2)} ms in this run; load average ${round(loadavg()[0]!, 1)} on ${cpus().length} cores (other processes included).\n\n${statementTable(explaining.statements())}\n\nPlan of the statement with the most time (its slowest call):\n\n\`\`\`\n${explaining.slowestPlan()}\n\`\`\``,
      profile,
    });
  }
});
