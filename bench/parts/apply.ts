/**
 * Part 7, ping application: how many pings a second the deadline role applies (logged, state
 * updated, acknowledged), for one hot heartbeat and for many; and how long other heartbeats'
 * pings wait while one heartbeat is flooded.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createUser } from '../../control-plane/src/accounts/service.ts';
import { consumerName } from '../../control-plane/src/heartbeats/deadline/consumer.ts';
import { startDeadline, type Deadline } from '../../control-plane/src/heartbeats/deadline/role.ts';
import { createOutboxPublisher } from '../../control-plane/src/platform/outbox.ts';
import type { Ping } from '../../shared/src/contracts/pings.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { ensureStreams } from '../../shared/src/provision.ts';
import { benchDatabase, benchLog, benchNats, natsServer, postgresServer } from '../lib/infra.ts';
import { runPart } from '../lib/part.ts';
import { cpuUsByCommand } from '../lib/proc.ts';
import { startProfiling } from '../lib/profile.ts';
import { runScript } from '../lib/child.ts';
import { publishWindowed, successPing } from '../lib/publish.ts';
import { round, sig, summarize } from '../lib/stats.ts';
import { insertQuiet } from './misses-setup.ts';

const partitions = 16;
const goal = 10_000;
const serverCommands = ['postgres', 'nats-server'];

await runPart('apply', 'Ping application', async (ctx) => {
  const q = ctx.quick;
  const many = q ? 2_000 : 10_000;
  const backlog = q ? 20_000 : 100_000;
  const limitMs = q ? 30_000 : 60_000;
  const adminUrl = await postgresServer(ctx);
  const natsUrl = await natsServer(ctx);
  const db = await benchDatabase(ctx, adminUrl);
  const { nc, names } = await benchNats(ctx, natsUrl);
  await ensureStreams(nc, names, { replicas: 1 });
  const outbox = createOutboxPublisher({ sql: db.sql, nc, names, log: benchLog });
  ctx.cleanup(() => outbox.stop());
  const user = await createUser(db.sql, { email: 'apply@bench.test', password: 'a long bench password' });
  await insertQuiet(db.sql, user.project_id, many + 1);
  const ids = ((await db.sql`select id from heartbeats order by id`) as unknown as { id: string }[]).map((r) => r.id);
  const hot = ids[0]!;
  const others = ids.slice(1);

  const ping = (heartbeatId: string): { subject: string; payload: string; msgId: string } => {
    const p: Ping = successPing(heartbeatId);
    return { subject: names.subjects.ping(pingPartition(heartbeatId, partitions), heartbeatId), payload: JSON.stringify(p), msgId: p.id };
  };

  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  /** Pings still to be applied: not yet delivered or not yet acknowledged, over every partition. */
  const outstanding = async () => {
    let n = 0;
    for (let p = 0; p < partitions; p++) {
      const c = await jsm.consumers.info(names.streams.pings, consumerName(p)).catch(() => undefined);
      n += c ? c.num_pending + c.num_ack_pending : 0;
    }
    return n;
  };

  const start = async (): Promise<Deadline> => {
    const role = await startDeadline({ sql: db.sql, nc, names, log: benchLog, outbox, partitions, replicas: 1 });
    ctx.cleanup(() => role.stop());
    for (const deadline = performance.now() + 60_000; role.stats().owned.length < partitions;) {
      if (performance.now() > deadline) throw new Error('the role did not take every partition within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    return role;
  };

  /** A backlog of `count` pings published while no role runs, then applied by a fresh role (CPU-profiled). */
  const drain = async (label: string, heartbeatOf: (i: number) => string, profileName: string) => {
    const published = await publishWindowed(nc, backlog, (i) => ping(heartbeatOf(i)), 256);
    if (published.failed > 0) throw new Error(`${published.failed} pings not published`);
    const publishRate = (1000 * published.acked) / published.wallMs;
    // The rate is taken between 10% and 90% of the backlog applied: neither the role's start
    // (leases, loading the heartbeats) nor the tail of the last batches counts.
    const t0 = performance.now();
    const stopProfiling = q ? undefined : await startProfiling(1_000);
    const cpuFrom = { self: process.cpuUsage(), others: cpuUsByCommand(serverCommands) };
    const role = await start();
    let applied = 0;
    let t10: number | undefined;
    let t90: number | undefined;
    while (performance.now() - t0 < limitMs) {
      applied = role.stats().pings;
      if (t10 === undefined && applied >= backlog * 0.1) t10 = performance.now();
      if (applied >= backlog * 0.9) {
        t90 = performance.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const elapsed = performance.now() - t0;
    const self = process.cpuUsage(cpuFrom.self);
    const others = cpuUsByCommand(serverCommands);
    const perPing = (us: number) => us / Math.max(1, applied);
    const cost = {
      role: perPing(self.user + self.system),
      postgres: perPing(others.postgres! - cpuFrom.others.postgres!),
      nats: perPing(others['nats-server']! - cpuFrom.others['nats-server']!),
    };
    const profile = await stopProfiling?.(profileName);
    const rate = t10 !== undefined && t90 !== undefined ? (1000 * 0.8 * backlog) / (t90 - t10) : (1000 * applied) / elapsed;
    await role.stop();
    ctx.log(
      `${label}: ${applied} of ${backlog} applied in ${round(elapsed / 1000, 1)} s: ${Math.round(rate)}/s (published at ${Math.round(publishRate)}/s)`,
    );
    ctx.log(
      `${label}: CPU per ping applied: role ${Math.round(cost.role)} µs, Postgres ${Math.round(cost.postgres)} µs, nats-server ${Math.round(cost.nats)} µs`,
    );
    return { applied, rate, publishRate, elapsedMs: elapsed, cost, profile };
  };

  // Whatever the last run left (a time limit reached) is applied before the next one starts.
  const settle = async () => {
    const role = await start();
    for (const deadline = performance.now() + 600_000; (await outstanding()) > 0;) {
      if (performance.now() > deadline) throw new Error('the backlog was not applied within 10 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    await role.stop();
  };

  const hotRun = await drain('one hot heartbeat', () => hot, 'apply-hot');
  await settle();
  const manyRun = await drain(`${many.toLocaleString('en')} heartbeats`, (i) => others[i % others.length]!, 'apply-many');
  await settle();

  // Fairness: one heartbeat flooded from another process as fast as one connection publishes,
  // while 100 others get one ping each every 100 ms; each of their pings is timed from its
  // publish to its state in Postgres.
  const role = await start();
  const watched = others.slice(0, 100);
  const floodMs = q ? 5_000 : 15_000;
  const flood = runScript<{ sent: number }>('parts/apply-flood.ts', [natsUrl, names.namespace, hot, String(partitions), String(floodMs)], {
    timeoutMs: floodMs + 60_000,
    label: 'flood',
  });
  const delays: number[] = [];
  const t0 = performance.now();
  while (performance.now() - t0 < floodMs) {
    const round0 = Date.now();
    const publishedAt = new Map<string, number>();
    await Promise.all(
      watched.map(async (id) => {
        const m = ping(id);
        await js.publish(m.subject, m.payload, { msgID: m.msgId });
        publishedAt.set(id, Date.now());
      }),
    );
    // The stream stamps a ping after this process sent it: its state shows a last_ping_at at or after round0.
    for (const deadline = performance.now() + 120_000; publishedAt.size > 0;) {
      const rows = (await db.sql`
        select id from heartbeats where id = any(${db.sql.array([...publishedAt.keys()])}::uuid[]) and last_ping_at >= ${new Date(round0)}`) as unknown as {
        id: string;
      }[];
      const seen = Date.now();
      for (const r of rows) {
        delays.push(seen - publishedAt.get(r.id)!);
        publishedAt.delete(r.id);
      }
      if (performance.now() > deadline) throw new Error('pings of other heartbeats not applied within 120 s while one was flooded');
      if (publishedAt.size > 0) await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, Math.max(0, round0 + 100 - Date.now())));
  }
  const { sent: floodSent } = await flood;
  const floodRate = (1000 * floodSent) / floodMs;
  for (const deadline = performance.now() + 600_000; (await outstanding()) > 0;) {
    if (performance.now() > deadline) throw new Error('the flood was not applied within 10 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const floodApplied = role.stats().pings;
  await role.stop();
  const fair = summarize(delays);
  ctx.log(
    `other heartbeats while one is flooded at ${Math.round(floodRate)}/s: p50 ${fair.p50} ms, p99 ${fair.p99} ms, max ${fair.max} ms (${delays.length} pings); ${floodApplied} applied in all`,
  );

  ctx.method.push(
    `${many.toLocaleString('en')} heartbeats and one more (the hot one), held by one deadline role (\`startDeadline\`, ${partitions} partitions, all leased by this process), with Postgres and nats-server on the same machine.`,
    `Applied per second: ${backlog.toLocaleString('en')} success pings are published to PINGS (256 acks outstanding) while no role runs, then a role is started; the rate is taken from 10% to 90% of them applied (logged, state written, acknowledged), so that neither the role's start nor the last batches count; at most ${limitMs / 1000} s. Hot: every ping is for one heartbeat. Many: round-robin over ${many.toLocaleString('en')} heartbeats.`,
    'Baseline: the rate at which the same pings were published to the stream, with acks awaited (the most a ping edge can accept through one connection).',
    `Fairness: while another process floods the hot heartbeat through one connection (256 acks outstanding), 100 other heartbeats get one ping each every 100 ms for ${floodMs / 1000} s; each of their pings is timed from its acknowledged publish until Postgres shows it applied (polled every 5 ms).`,
  );
  ctx.figures.push(
    {
      metric: 'Pings applied per second, one hot heartbeat',
      value: Math.round(hotRun.rate),
      unit: 'pings/s',
      baseline: { label: 'published to PINGS', value: Math.round(hotRun.publishRate) },
      ratio: sig(hotRun.rate / hotRun.publishRate),
    },
    {
      metric: `Pings applied per second, ${many.toLocaleString('en')} heartbeats`,
      value: Math.round(manyRun.rate),
      unit: 'pings/s',
      baseline: { label: 'published to PINGS', value: Math.round(manyRun.publishRate) },
      ratio: sig(manyRun.rate / manyRun.publishRate),
    },
    {
      metric: `Other heartbeats' pings applied, p50, while one is flooded at ${Math.round(floodRate).toLocaleString('en')} pings/s`,
      value: round(fair.p50, 1),
      unit: 'ms',
    },
    { metric: "Other heartbeats' pings applied, p99, while one is flooded", value: round(fair.p99, 1), unit: 'ms' },
    { metric: "Other heartbeats' pings applied, max, while one is flooded", value: round(fair.max, 1), unit: 'ms' },
  );
  const hotMet = hotRun.rate >= goal;
  const manyMet = manyRun.rate >= goal;
  const cores = availableParallelism();
  for (const [run, met, what] of [
    [hotRun, hotMet, 'one hot heartbeat'],
    [manyRun, manyMet, `${many.toLocaleString('en')} heartbeats`],
  ] as const) {
    const total = run.cost.role + run.cost.postgres + run.cost.nats;
    ctx.figures.push({
      metric: `CPU per ping applied, ${what}: deadline role + Postgres + nats-server`,
      value: Math.round(total),
      unit: 'µs',
    });
    if (met) continue;
    ctx.notes.push(
      `CPU per ping applied (${what}): ${Math.round(run.cost.role)} µs in the deadline role's process (the bench's polling included), ${Math.round(run.cost.postgres)} µs in Postgres, ${Math.round(run.cost.nats)} µs in nats-server: ${Math.round(total)} µs, so ${cores} cores apply at most ~${Math.round((cores * 1e6) / total).toLocaleString('en')} a second with nothing else running.`,
    );
    if (run.profile)
      ctx.limits.push({
        title: `the deadline role's process while it applied the backlog of ${what} (profiled while measured, 1 kHz sampling)`,
        profile: run.profile,
      });
  }
  ctx.goals.push(
    {
      goal: `One hot heartbeat: at least ${goal.toLocaleString('en')} pings applied per second`,
      actual: `${Math.round(hotRun.rate).toLocaleString('en')} pings/s`,
      met: hotMet,
      ...(hotMet ? {} : { shortfall: `${round(goal / Math.max(1, hotRun.rate), 1)}x too slow` }),
    },
    {
      goal: `Many heartbeats: at least ${goal.toLocaleString('en')} pings applied per second`,
      actual: `${Math.round(manyRun.rate).toLocaleString('en')} pings/s`,
      met: manyMet,
      ...(manyMet ? {} : { shortfall: `${round(goal / Math.max(1, manyRun.rate), 1)}x too slow` }),
    },
  );
});
