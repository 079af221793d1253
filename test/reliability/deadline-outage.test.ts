import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../harness/db.ts';
import { requireTestEnv } from '../harness/env.ts';
import { assertClean } from './assert.ts';
import { writeResults, type ResultRow } from './results.ts';
import { cyclesPerFault, runFault, startSuite, type Suite } from './suite.ts';
import { send } from './traffic.ts';

/**
 * The deadline role away for minutes while jobs keep pinging: killed with SIGKILL (no process
 * holds its partitions' leases until it is started again), or frozen with SIGSTOP past its
 * leases. Heartbeats with the shortest schedule the API allows (period and grace of a minute:
 * a miss 120 s after a ping) are pinged every second throughout; each cycle one of them stops
 * pinging just before the outage and misses for real while the role is away. When the role comes
 * back it replays minutes of pings: the steady heartbeats owe no alert at all (every alert of
 * theirs counts as spurious), the silent one owes exactly one heartbeat.down, raised after the
 * role is back, and the heartbeat.up of its first ping after that.
 */
const OUTAGE_MS = Number(process.env.RELIABILITY_DEADLINE_OUTAGE_MS ?? 150_000);
const STEADY = 6;
const MINUTE_S = 60;

describe('the deadline role away under steady pings', () => {
  let database: TestDatabase | undefined;
  let suite: Suite | undefined;
  const rows: ResultRow[] = [];
  let pinger: ReturnType<typeof steadyPings> | undefined;

  before(async () => {
    database = await createTestDatabase({ migrate: false });
    // The ledger's pings every 2 s: a heartbeat's log keeps its newest 100 pings, and a step that
    // replays more than that of one heartbeat logs only those, so an acknowledged ping could not
    // be found there after an outage of 150 s at one a second.
    suite = await startSuite({
      databaseUrl: database.url,
      natsServers: requireTestEnv('nats'),
      replicas: 1,
      deadlineProcesses: 1,
      traffic: { pingEveryMs: 2_000 },
    });
  });

  after(async () => {
    if (rows.length > 0) writeResults(import.meta.url, rows);
    await pinger?.stop();
    await suite?.stop();
    await database?.drop();
  });

  /** Pings each heartbeat every second through every ping URL in turn, retrying refusals; `silence` takes one out. */
  function steadyPings(s: Suite, ids: string[]) {
    const edges = [...s.dep.controlPlanes.map((c) => c.url), ...s.dep.agents.map((a) => a.pingUrl)];
    const pinged = new Set(ids);
    const lastAcked = new Map<string, number>();
    let on = true;
    const loops = ids.map(async (id, i) => {
      await new Promise((r) => setTimeout(r, (1_000 * i) / ids.length));
      for (let n = i; on; n++) {
        if (!pinged.has(id)) {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        const started = Date.now();
        const res = await send('GET', `${edges[n % edges.length]}/heartbeat/${id}`, { timeoutMs: 10_000 });
        if ('status' in res && res.status === 200) lastAcked.set(id, Date.now());
        await new Promise((r) => setTimeout(r, Math.max(0, started + 1_000 - Date.now())));
      }
    });
    return {
      lastAcked,
      /** Stops pinging `id`; resolves once no ping of it is in flight, with when its last one was acknowledged. */
      async silence(id: string): Promise<number> {
        pinged.delete(id);
        await new Promise((r) => setTimeout(r, 11_000));
        return lastAcked.get(id)!;
      },
      resume(id: string) {
        pinged.add(id);
      },
      async stop() {
        on = false;
        await Promise.all(loops);
      },
    };
  }

  const statusOf = async (s: Suite, id: string) =>
    (await s.dep.db<{ status: string }[]>`select status from heartbeats where id = ${id}`)[0]?.status;
  const until = async (what: string, ok: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it('raises no alert for heartbeats that kept pinging, and each real miss once, when the deadline role is away for minutes', async () => {
    const s = suite!;
    const cycles = Math.min(cyclesPerFault, 2) + 1;
    const create = async (name: string) => {
      const res = await s.dep.api('POST', '/heartbeats', { project_id: s.dep.projectId, name, grace_period: MINUTE_S, period: MINUTE_S });
      if (res.status !== 201) throw new Error(`POST /heartbeats: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    };
    const steady: string[] = [];
    for (let i = 0; i < STEADY; i++) steady.push(await create(`every minute ${i + 1}`));
    const silent: string[] = [];
    for (let i = 0; i < cycles; i++) silent.push(await create(`goes quiet ${i + 1}`));
    pinger = steadyPings(s, [...steady, ...silent]);
    await until(
      'every heartbeat up',
      async () => {
        const [r] = await s.dep.db<{ n: number }[]>`
        select count(*)::int as n from heartbeats where id = any(${s.dep.db.array([...steady, ...silent])}::uuid[]) and status = 'up'`;
        return r!.n === steady.length + silent.length;
      },
      60_000,
    );

    const misses: { silentFor: number; raisedAfterRestart: number; occurredAt: number; lastAcked: number }[] = [];
    let quiet: { id: string; lastAcked: number; backAt: number } | undefined;
    const deadline = s.dep.deadlines[0]!.proc;
    const faults: { name: string; take: (cycle: number) => Promise<number> }[] = [
      {
        name: `deadline role: kill -9, away ${Math.round(OUTAGE_MS / 1000)} s under steady pings (no lease holder)`,
        take: async () => {
          await deadline.kill();
          await new Promise((r) => setTimeout(r, OUTAGE_MS));
          const backAt = Date.now();
          await deadline.start();
          return backAt;
        },
      },
      {
        name: `deadline role: SIGSTOP ${Math.round(OUTAGE_MS / 1000)} s (its leases lapse), SIGCONT`,
        take: async () => {
          deadline.pause();
          try {
            await new Promise((r) => setTimeout(r, OUTAGE_MS));
          } finally {
            deadline.resume();
          }
          return Date.now();
        },
      },
    ];
    let silentIndex = 0;
    for (const fault of faults) {
      const { row, failures } = await runFault(
        s,
        {
          name: fault.name,
          recoveryFrom: 'heal',
          async inject(cycle) {
            const id = silent[silentIndex++]!;
            const lastAcked = await pinger!.silence(id);
            const backAt = await fault.take(cycle);
            const healedAt = Date.now();
            quiet = { id, lastAcked, backAt };
            s.observer.owe(id, 'heartbeat.down');
            return { healedAt };
          },
          async afterRecovery() {
            const q = quiet!;
            await until(`the silent heartbeat ${q.id} down`, async () => (await statusOf(s, q.id)) === 'down', 180_000);
            const [down] = await s.dep.db<{ occurred_at: string; created_at: Date }[]>`
              select payload->>'occurred_at' as occurred_at, created_at from outbox_events
              where payload->'subject'->>'id' = ${q.id} and kind = 'heartbeat.down'`;
            misses.push({
              silentFor: Date.now() - q.lastAcked,
              raisedAfterRestart: down!.created_at.getTime() - q.backAt,
              occurredAt: Date.parse(down!.occurred_at),
              lastAcked: q.lastAcked,
            });
            pinger!.resume(q.id);
            s.observer.owe(q.id, 'heartbeat.up');
            await until(`the silent heartbeat ${q.id} up again`, async () => (await statusOf(s, q.id)) === 'up', 60_000);
          },
          notes() {
            const late = misses.map((m) => Math.round((m.occurredAt - m.lastAcked) / 1000));
            return (
              `${STEADY} heartbeats (period and grace 60 s) pinged every second throughout, none alerted; ` +
              `each cycle one more went quiet before the outage: its down raised once, ${misses.map((m) => `${(m.raisedAfterRestart / 1000).toFixed(1)} s`).join(', ')} after the role was back, ` +
              `dated ${late.join(', ')} s after its last acknowledged ping (120 s of period and grace, plus the ping's way to the stream)`
            );
          },
        },
        fault.name.startsWith('deadline role: kill') ? Math.min(cyclesPerFault, 2) : 1,
      );
      for (const m of misses.splice(0)) {
        // The ping's instant is the stream's, between its request and its acknowledgement.
        if (m.occurredAt < m.lastAcked + 120_000 - 5_000 || m.occurredAt > m.lastAcked + 120_000 + 1_000) {
          failures.push(
            `a miss dated ${new Date(m.occurredAt).toISOString()} for a last ping acknowledged at ${new Date(m.lastAcked).toISOString()}`,
          );
        }
        if (m.raisedAfterRestart < 0) failures.push('a miss raised before the deadline role was back');
      }
      rows.push(row);
      writeResults(import.meta.url, rows);
      assertClean(row, failures);
    }
  });
});
