import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { KvWatchInclude, type KV } from '@nats-io/kv';
import { freePort, freePorts } from '../../control-plane/src/platform/embedded/ports.ts';
import { rendezvousOwner } from '../../probe-agent/src/peers/rendezvous.ts';
import { DomainEvent } from '../../shared/src/contracts/events.ts';
import { DEADLINE_ROLE } from '../../control-plane/src/heartbeats/deadline/role.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { openBucket } from '../../shared/src/provision.ts';
import { scratchDir } from '../distributed/cluster.ts';
import { allResults, recordArrivals, slotKey } from '../distributed/harness.ts';
import { apiClient, type ApiResponse, type Call } from '../harness/api.ts';
import { startCli } from '../harness/cli.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type Target } from '../harness/http.ts';
import { eventually, readStream } from '../harness/streams.ts';
import { leaseHolders } from '../heartbeats/deadline-helpers.ts';
import { writeResults, type ResultRow } from './results.ts';

/**
 * Process pauses: SIGSTOP freezes a process with its sockets, timers and leases as they were,
 * SIGCONT wakes it up believing no time passed. A paused probe agent's monitors must move to a
 * peer of its region once its presence is stale; a paused deadline process's partitions to the
 * other deadline process once its leases expire. When the frozen process wakes up, nothing it
 * still believes it owns may produce a second alert.
 *
 * The control plane under test runs as real processes (`uptime probe-agent`, `uptime
 * control-plane --roles deadline`) next to the api, assign, ingest and notify roles in this
 * process; alerts are counted on EVENTS by event id and at a local webhook receiver by delivery.
 * Lease and presence TTLs are the product's (10 s for deadline leases, 15 s for agent presence).
 */
const CYCLES = 5;
const REGION = 'pause-region';
const MONITORS = 6;

/** A list that grows as things arrive, with waits re-evaluated on each arrival. */
function arrivalList<T>() {
  const items: T[] = [];
  let waiters: { done: (all: T[]) => boolean; resolve: () => void }[] = [];
  return {
    items,
    push(item: T) {
      items.push(item);
      waiters = waiters.filter((w) => (w.done(items) ? (w.resolve(), false) : true));
    },
    until(done: (all: T[]) => boolean, what: string, timeoutMs: number): Promise<void> {
      if (done(items)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const finish = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.resolve !== finish);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        waiters.push({ done, resolve: finish });
      });
    },
  };
}

/** A product process this file started; it is always woken and killed at the end, however the test ends. */
interface Proc {
  name: string;
  pid: number;
  /** Where its output stands now: log waits look at what comes after. */
  mark(): number;
  /** Resolves at the first output line after `from` that matches. */
  waitLog(pattern: RegExp, from: number, what: string, timeoutMs: number): Promise<void>;
  /** The output lines after `from` that match. */
  logLines(pattern: RegExp, from: number): string[];
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const started = new Set<ChildProcess>();
const wakeAndKill = () => {
  for (const c of started) {
    c.kill('SIGCONT');
    c.kill('SIGKILL');
  }
};
process.once('exit', wakeAndKill);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    wakeAndKill();
    // Nobody else handles it: the default action ends the process as it would have.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

async function startProc(name: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<Proc> {
  const { child, output, exited } = await startCli(args, env, ready, 90_000);
  started.add(child);
  const done = () => child.exitCode !== null || child.signalCode !== null;
  void exited.then(() => started.delete(child));
  let waiters: (() => void)[] = [];
  const onOutput = () => {
    const pending = waiters;
    waiters = [];
    for (const w of pending) w();
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const matching = (pattern: RegExp, from: number) =>
    output()
      .slice(from)
      .split('\n')
      .filter((l) => pattern.test(l));
  return {
    name,
    pid: child.pid!,
    mark: () => output().length,
    logLines: matching,
    waitLog(pattern, from, what, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: timed out after ${timeoutMs} ms waiting for ${what}\n${output().slice(-3000)}`)),
          timeoutMs,
        );
        const test = () => {
          if (matching(pattern, from).length > 0) {
            clearTimeout(timer);
            resolve();
          } else if (done()) {
            clearTimeout(timer);
            reject(new Error(`${name} exited while waiting for ${what}\n${output().slice(-3000)}`));
          } else {
            waiters.push(test);
          }
        };
        test();
      });
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      if (done()) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!);
};

interface SeenEvent {
  event: DomainEvent;
  at: number;
}

describe('process pauses (SIGSTOP, then SIGCONT)', () => {
  let plane: TestControlPlane;
  let account: TestAccount;
  let api: Call;
  let sink: Target;
  let events: ReturnType<typeof arrivalList<SeenEvent>>;
  let stopEvents: () => void = () => {};
  const procs: Proc[] = [];
  const rows: ResultRow[] = [];
  /** A run that failed still leaves its row, with how far it got. */
  const recordFailure = (fault: string, completed: number, recoveries: number[], err: unknown) => {
    if (rows.some((r) => r.fault === fault)) return;
    rows.push({
      fault,
      cycles: completed,
      recovery_ms: { p50: percentile(recoveries, 50), max: percentile(recoveries, 100) },
      lost: 0,
      duplicated: 0,
      notes: `run failed after ${completed} cycles: ${String(err).split('\n')[0]}`,
    });
  };
  const dataDir = scratchDir('uptime-pauses-');

  before(async () => {
    plane = await startTestControlPlane({ roles: ['api', 'assign', 'ingest', 'notify'] });
    account = await createAccount(plane.db.sql);
    api = apiClient(plane.url, account.token);
    sink = await startWebhookSink();
    const hook = await api('POST', '/integrations', {
      project_id: account.project_id,
      name: 'receiver',
      type: 'webhook',
      config: { url: `${sink.url}/hook` },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    // Every publish on EVENTS as it goes by: a republished event (same id) is seen here too.
    events = arrivalList<SeenEvent>();
    const sub = plane.nats.nc.subscribe(plane.nats.names.subjects.events, {
      callback: (_err, m) => {
        const parsed = DomainEvent.safeParse(m.json());
        if (parsed.success) events.push({ event: parsed.data, at: Date.now() });
      },
    });
    await plane.nats.nc.flush();
    stopEvents = () => sub.unsubscribe();
  });

  after(async () => {
    const steps: (() => Promise<unknown>)[] = [
      ...procs.map((p) => () => p.stop()),
      async () => stopEvents(),
      async () => sink?.close(),
      async () => plane?.stop(),
    ];
    for (const step of steps) await step().catch((err: unknown) => console.error('cleanup step failed:', err));
    if (rows.length > 0) {
      writeResults(import.meta.url, rows);
    }
  });

  const commonEnv = () => ({
    NATS_URL: plane.nats.url,
    NATS_NAMESPACE: plane.nats.namespace,
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
  });

  /** Webhook requests per event id, and event ids of alerts nobody was told about. */
  const deliveriesOf = (alertIds: string[]) => {
    const byEvent = new Map<string, number>();
    const byKey = new Map<string, number>();
    for (const r of sink.requests) {
      const id = (JSON.parse(r.body) as { id: string }).id;
      byEvent.set(id, (byEvent.get(id) ?? 0) + 1);
      const key = String(r.headers['idempotency-key']);
      byKey.set(key, (byKey.get(key) ?? 0) + 1);
    }
    const wanted = new Set(alertIds);
    return {
      missing: alertIds.filter((id) => !byEvent.has(id)),
      doubled: [...byEvent].filter(([id, n]) => wanted.has(id) && n > 1).reduce((s, [, n]) => s + n - 1, 0),
      doubledKeys: [...byKey.values()].reduce((s, n) => s + n - 1, 0),
    };
  };

  it('moves a paused agent’s monitors to its peer, and the woken agent raises nothing twice', async () => {
    const fault = 'SIGSTOP/SIGCONT of a probe agent';
    const recoveries: number[] = [];
    let completed = 0;
    let target: Target | undefined;
    let arrivals: Awaited<ReturnType<typeof recordArrivals>> | undefined;
    try {
      target = await startTarget({ status: 200, body: 'ok' });
      const rec = await recordArrivals(plane.nats.nc, plane.nats.names);
      arrivals = rec;
      const agents: (Proc & { id: string })[] = [];
      for (const n of ['a', 'b']) {
        const id = `pause-${n}-${process.pid}`;
        const [agentPort, pingPort] = await freePorts(2);
        const env = { ...commonEnv(), AGENT_ID: id, REGION, AGENT_PORT: String(agentPort), PING_PORT: String(pingPort) };
        const p = await startProc(`agent ${n}`, ['probe-agent', '--region', REGION], env, /"msg":"probe agent started"/);
        procs.push(p);
        agents.push(Object.assign(p, { id }));
      }
      const agentIds = agents.map((a) => a.id);
      const owner = (monitorId: string) => rendezvousOwner(monitorId, agentIds)!;

      const monitorIds: string[] = [];
      for (let i = 0; i < MONITORS; i++) {
        const res: ApiResponse = await api('POST', '/monitors', {
          name: `paused ${i}`,
          url: `${target.url}/m${i}`,
          project_id: account.project_id,
          interval: 5,
          timeout: 2,
          regions: [REGION],
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        monitorIds.push(res.body.data.id);
      }
      const mine = new Set(monitorIds);
      for (const a of agents)
        assert.ok(
          monitorIds.some((m) => owner(m) === a.id),
          `${a.name} owns a monitor`,
        );
      const checkedByOwners = (since: number, times: number) => (all: typeof rec.arrivals) =>
        monitorIds.every(
          (m) => all.filter((x) => x.at >= since && x.result.monitor_id === m && x.result.agent_id === owner(m)).length >= times,
        );
      await rec.until(checkedByOwners(0, 1), 'every monitor checked by its owner', 60_000);
      await eventually(
        async () => {
          const rows = await plane.db.sql<{ n: number }[]>`
          select count(*)::int as n from monitors where id = any(${plane.db.sql.array(monitorIds)}::uuid[]) and status = 1`;
          return rows[0]!.n === MONITORS;
        },
        'every monitor up',
        60_000,
        200,
      );

      interface Cycle {
        pausedAt: number;
        kind: 'monitor.down' | 'monitor.up';
        victim: string;
        moved: string[];
        staleTakeovers: number;
      }
      const cycles: Cycle[] = [];
      for (let c = 0; c < CYCLES; c++) {
        const victim = agents[c % 2]!;
        const peer = agents[(c + 1) % 2]!;
        const moved = monitorIds.filter((m) => owner(m) === victim.id);
        const failing = c % 2 === 0;
        const kind = failing ? 'monitor.down' : 'monitor.up';
        const victimMark = victim.mark();
        const peerMark = peer.mark();

        const pausedAt = Date.now();
        victim.pause();
        // Every monitor changes state while the agent is frozen: the peer's own at once, the
        // paused agent's only once the peer has taken them over.
        target.respond(failing ? { status: 503, body: 'maintenance' } : { status: 200, body: 'ok' });
        await rec.until(
          (all) => moved.every((m) => all.some((x) => x.at >= pausedAt && x.result.monitor_id === m && x.result.agent_id === peer.id)),
          `${peer.name} checking the ${moved.length} monitors of the paused ${victim.name}`,
          90_000,
        );
        const firstByPeer = moved.map(
          (m) => rec.arrivals.find((x) => x.at >= pausedAt && x.result.monitor_id === m && x.result.agent_id === peer.id)!.at,
        );
        recoveries.push(Math.max(...firstByPeer) - pausedAt);
        await events.until(
          (all) => monitorIds.every((m) => all.some((e) => e.at >= pausedAt && e.event.subject.id === m && e.event.kind === kind)),
          `${kind} of every monitor`,
          60_000,
        );
        await peer.waitLog(/agent presence went stale|agent left the region/, peerMark, 'the peer counting the paused agent out', 1_000);

        const resumeMark = peer.mark();
        const resumedAt = Date.now();
        victim.resume();
        // The woken agent is back in the region once its peer sees it again and the monitors are
        // checked by their owners of the two-agent split, twice each: the hand-over is behind us.
        await peer.waitLog(/agent joined the region/, resumeMark, 'the peer seeing the woken agent again', 60_000);
        await rec.until(checkedByOwners(resumedAt, 2), 'every monitor checked twice by its owner after the wake-up', 60_000);
        cycles.push({
          pausedAt,
          kind,
          victim: victim.id,
          moved,
          staleTakeovers: victim.logLines(/agent presence went stale: taking over/, victimMark).length,
        });
        completed++;
      }

      // Stopping the agents flushes what they hold; then everything published reaches Postgres.
      for (const a of agents) await a.stop();
      const { nc, names } = plane.nats;
      const stream = await eventually(
        () => allResults(nc, names.streams.results, `${names.namespace}.results.${REGION}.>`),
        'reading RESULTS',
        30_000,
        200,
      );
      const streamKeys = stream.filter((r) => mine.has(r.monitor_id)).map(slotKey);
      const stored = await eventually(
        async () => {
          const sql = plane.db.sql;
          const rows = await sql<{ key: string }[]>`
            select monitor_id || ':' || region || ':' || (extract(epoch from scheduled_at) * 1000)::bigint as key
            from check_results where monitor_id = any(${sql.array(monitorIds)}::uuid[])`;
          return rows.length >= new Set(streamKeys).size && rows.map((r) => r.key);
        },
        'every result in Postgres',
        60_000,
        200,
      );
      const [rollup] = await plane.db.sql<{ n: number }[]>`
        select coalesce(sum(checks), 0)::int as n from check_rollups where monitor_id = any(${plane.db.sql.array(monitorIds)}::uuid[])`;
      // Slots published by both agents: the stream keeps the first only.
      const publishers = new Map<string, Set<string>>();
      for (const x of rec.arrivals.filter((a) => mine.has(a.result.monitor_id))) {
        const k = slotKey(x.result);
        publishers.set(k, (publishers.get(k) ?? new Set()).add(x.result.agent_id));
      }
      const publishedTwice = [...publishers.values()].filter((s) => s.size > 1).length;

      // Alerts: in each cycle's window, exactly the expected change once per monitor.
      const alerts = new Map<string, SeenEvent>();
      for (const e of events.items) if (mine.has(e.event.subject.id) && e.event.kind.startsWith('monitor.')) alerts.set(e.event.id, e);
      const onStream = (await readStream(nc, names.streams.events))
        .filter((e) => mine.has(e.data.subject?.id))
        .map((e) => e.data.id as string);
      let lost = 0;
      let duplicated = 0;
      const anomalies: string[] = [];
      cycles.forEach((cy, i) => {
        const end = cycles[i + 1]?.pausedAt ?? Infinity;
        for (const m of monitorIds) {
          const inWindow = [...alerts.values()].filter((e) => e.event.subject.id === m && e.at >= cy.pausedAt && e.at < end);
          const expected = inWindow.filter((e) => e.event.kind === cy.kind).length;
          if (expected === 0) {
            lost++;
            anomalies.push(`cycle ${i + 1}: no ${cy.kind} for ${m}`);
          }
          const extra = inWindow.length - Math.min(1, expected);
          if (extra > 0) {
            duplicated += extra;
            anomalies.push(`cycle ${i + 1}: ${extra} extra event(s) for ${m}`);
          }
        }
      });
      const before = alerts.size;
      const firstPause = cycles[0]?.pausedAt ?? 0;
      const early = [...alerts.values()].filter((e) => e.at < firstPause).length;
      if (early > 0) {
        duplicated += early;
        anomalies.push(`${early} monitor event(s) before the first pause`);
      }
      // Webhook deliveries: one per alert.
      const alertIds = [...alerts.keys()];
      await sink.waitForRequests(alertIds.length, 60_000).catch(() => {});
      await eventually(async () => deliveriesOf(alertIds).missing.length === 0, 'a webhook delivery per alert', 60_000, 200).catch(
        () => {},
      );
      const d = deliveriesOf(alertIds);
      lost += d.missing.length;
      duplicated += d.doubled;
      const [incidents] = await plane.db.sql<{ n: number; open: number }[]>`
        select count(*)::int as n, count(*) filter (where ended_at is null)::int as open
        from incidents where monitor_id = any(${plane.db.sql.array(monitorIds)}::uuid[])`;
      const downCycles = cycles.filter((cy) => cy.kind === 'monitor.down').length;
      const extraIncidents = Math.max(0, incidents!.n - downCycles * MONITORS);
      duplicated += extraIncidents;
      const doubleStoredResults =
        stored.length - new Set(stored).size + (rollup!.n - stored.length) + (streamKeys.length - new Set(streamKeys).size);
      duplicated += Math.max(0, doubleStoredResults);

      const staleTakeovers = cycles.reduce((n, cy) => n + cy.staleTakeovers, 0);
      rows.push({
        fault,
        cycles: cycles.length,
        recovery_ms: { p50: percentile(recoveries, 50), max: percentile(recoveries, 100) },
        lost,
        duplicated,
        notes:
          `2 agents, ${MONITORS} monitors at 5 s; recovery: SIGSTOP until the peer published a result for every monitor of the paused agent ` +
          `(agent presence TTL 15 s). ${before} monitor events, ${alertIds.length} webhook deliveries expected, ${d.doubledKeys} repeated delivery ids. ` +
          `${publishedTwice} slots published by both agents around a wake-up, each stored once (RESULTS msg id); ` +
          `${staleTakeovers} of ${cycles.length} woken agents first took the peer for stale, then shared again.` +
          (anomalies.length > 0 ? ` Anomalies: ${anomalies.slice(0, 5).join('; ')}` : ''),
      });

      assert.deepEqual(anomalies, []);
      assert.deepEqual(new Set(onStream), new Set(alertIds), 'EVENTS holds the events seen published, once each');
      assert.equal(onStream.length, alertIds.length, 'each event stored once on EVENTS');
      assert.deepEqual(d.missing, [], 'a webhook delivery for every alert');
      assert.equal(d.doubled, 0, 'no alert delivered twice');
      assert.equal(d.doubledKeys, 0, 'no delivery id sent twice');
      assert.equal(incidents!.n, downCycles * MONITORS, 'one incident per monitor and down cycle');
      assert.equal(incidents!.open, cycles.at(-1)?.kind === 'monitor.down' ? MONITORS : 0);
      assert.equal(new Set(streamKeys).size, streamKeys.length, 'each slot once in RESULTS');
      assert.equal(new Set(stored).size, stored.length, 'each slot once in Postgres');
      assert.deepEqual(new Set(stored), new Set(streamKeys), 'Postgres holds what RESULTS holds');
      assert.equal(rollup!.n, stored.length, 'rollups count each stored slot once');
      assert.equal(cycles.length, CYCLES);
    } catch (err) {
      recordFailure(fault, completed, recoveries, err);
      throw err;
    } finally {
      arrivals?.stop();
      await target?.close();
    }
  });

  it('takes over a paused deadline process’s partitions, and the woken process raises nothing twice', async () => {
    const fault = 'SIGSTOP/SIGCONT of a deadline process';
    const recoveries: number[] = [];
    let completed = 0;
    try {
      const { nc, names } = plane.nats;
      const partitions = plane.config.PING_PARTITIONS;
      const deadlines: Proc[] = [];
      for (const n of ['1', '2']) {
        const env = {
          ...commonEnv(),
          DATABASE_URL: plane.db.url,
          SECRET_KEY: plane.config.SECRET_KEY!,
          PORT: String(await freePort()),
          PG_POOL_SIZE: '4',
        };
        const p = await startProc(`deadline ${n}`, ['control-plane', '--roles', 'deadline'], env, /"msg":"control plane started"/);
        procs.push(p);
        deadlines.push(p);
      }
      const leases: KV = await openBucket(nc, names, 'leases', { replicas: 1 });
      const projection: KV = await openBucket(nc, names, 'heartbeats', { replicas: 1 });
      const pidOf = (holder: string) => Number(/:(\d+):[0-9a-f]+$/.exec(holder)?.[1]);
      const partitionOf = (id: string) => pingPartition(id, partitions);
      /** Partitions split evenly between the two processes; returns each partition's holder pid. */
      const split = () =>
        eventually(
          async () => {
            const holders = await leaseHolders(leases);
            const counts = deadlines.map((p) => [...holders.values()].filter((h) => pidOf(h) === p.pid).length);
            return (
              holders.size === partitions &&
              counts.every((n) => n === partitions / 2) &&
              new Map([...holders].map(([k, h]) => [k, pidOf(h)]))
            );
          },
          'partitions shared evenly by the two deadline processes',
          60_000,
          200,
        );

      /**
       * Freezes `p` as soon as its next membership write shows: its lease round then still runs
       * (the key listing and plan follow the write), so on waking it carries on with that round
       * before any renewal can tell it the leases are gone, while its deadline heap fires.
       */
      const pauseAfterMembershipWrite = async (p: Proc): Promise<boolean> => {
        const watch = await leases.watch({ key: `${DEADLINE_ROLE}-members.*`, include: KvWatchInclude.UpdatesOnly });
        const timer = setTimeout(() => watch.stop(), 30_000);
        try {
          for await (const e of watch) {
            if (e.operation === 'PUT' && pidOf((e.json() as { holder: string }).holder) === p.pid) {
              p.pause();
              return true;
            }
          }
          return false;
        } finally {
          clearTimeout(timer);
          watch.stop();
        }
      };

      interface Cycle {
        pausedAt: number;
        /** Frozen right after a membership write, with a lease round running. */
        midRound: boolean;
        /** From SIGCONT until the woken process said it stopped working on its partitions. */
        staleMs: number;
        created: string[];
        pinged: string[];
        orphans: string[];
        dueBeforePause: boolean;
        /** Why the woken process says it stopped working on its partitions. */
        why: string[];
      }
      const cycles: Cycle[] = [];
      let down: string[] = [];
      for (let c = 0; c < CYCLES; c++) {
        const holders = await split();
        const victim = deadlines[c % 2]!;
        const ofVictim = (id: string) => holders.get(partitionOf(id)) === victim.pid;

        // Heartbeats that miss 8 s from now: at least three in the partitions of the process about to freeze.
        const dueAt = Date.now() + 8_000;
        const created: string[] = [];
        while (created.filter(ofVictim).length < 3 && created.length < 24) {
          const res = await api('POST', '/heartbeats', {
            name: `paused job ${c}.${created.length}`,
            project_id: account.project_id,
            next_ping_at: new Date(dueAt - 60_000).toISOString(),
            grace_period: 60,
          });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          created.push(res.body.data.id);
        }
        // The holders armed them (they keep the projection's keys as they do).
        await eventually(
          async () => {
            for (const id of created) if ((await projection.get(id))?.operation !== 'PUT') return false;
            return true;
          },
          'new heartbeats watched by their holders',
          30_000,
          100,
        );

        const victimMark = victim.mark();
        // Every other cycle freezes the process in the middle of a lease round.
        const midRound = c % 2 === 1 && (await pauseAfterMembershipWrite(victim));
        if (!midRound) victim.pause();
        const pausedAt = Date.now();
        // A success ping for each heartbeat of the frozen partitions that an earlier cycle took down.
        const pinged = down.filter(ofVictim);
        for (const id of pinged) {
          const res = await fetch(`${plane.url}/heartbeat/${id}`);
          assert.equal(res.status, 200, `ping of ${id}`);
        }
        const orphans = [...created.filter(ofVictim), ...pinged];
        const raised = (all: SeenEvent[]) =>
          created.every((id) => all.some((e) => e.event.subject.id === id && e.event.kind === 'heartbeat.down')) &&
          pinged.every((id) => all.some((e) => e.at >= pausedAt && e.event.subject.id === id && e.event.kind === 'heartbeat.up'));
        await events.until(raised, `the misses and pings of the paused ${victim.name}'s partitions`, 60_000);
        const at = orphans.map(
          (id) =>
            events.items.find(
              (e) =>
                e.at >= pausedAt && e.event.subject.id === id && (e.event.kind === 'heartbeat.down' || e.event.kind === 'heartbeat.up'),
            )?.at ?? pausedAt,
        );
        recoveries.push(Math.max(...at) - pausedAt);

        const resumedAt = Date.now();
        victim.resume();
        await victim.waitLog(/partition leases lost/, victimMark, 'the woken process dropping the partitions it lost', 30_000);
        const lostLines = victim.logLines(/partition leases lost/, victimMark);
        const why = lostLines.map((l) => /"why":"([^"]*)"/.exec(l)?.[1] ?? '?');
        const staleMs = Date.parse(/"time":"([^"]+)"/.exec(lostLines[0]!)?.[1] ?? '') - resumedAt;
        cycles.push({ pausedAt, midRound, staleMs, created, pinged, orphans, dueBeforePause: pausedAt >= dueAt, why });
        down = [...down.filter((id) => !pinged.includes(id)), ...created];
        completed++;
      }
      // The woken process takes its share back; whatever it would still raise is raised by then.
      await split();

      const sql = plane.db.sql;
      await eventually(
        async () => {
          const [r] = await sql<{ n: number }[]>`select count(*)::int as n from outbox_unpublished`;
          return r!.n === 0;
        },
        'every outbox event published',
        30_000,
        200,
      );
      const created = cycles.flatMap((cy) => cy.created);
      const pinged = cycles.flatMap((cy) => cy.pinged);
      const ours = new Set(created);
      const alertKinds = new Set(['heartbeat.down', 'heartbeat.up']);
      const stream = (await readStream(nc, names.streams.events)).filter(
        (e) => ours.has(e.data.subject?.id) && alertKinds.has(e.data.kind),
      );
      const written = await sql<{ id: string; subject: string; kind: string }[]>`
        select id::text, payload->'subject'->>'id' as subject, kind from outbox_events
        where payload->'subject'->>'id' = any(${sql.array(created)}) and kind in ('heartbeat.down', 'heartbeat.up')`;

      let lost = 0;
      let duplicated = 0;
      const anomalies: string[] = [];
      const count = (id: string, kind: string) => stream.filter((e) => e.data.subject.id === id && e.data.kind === kind).length;
      for (const id of created) {
        const expected = { 'heartbeat.down': 1, 'heartbeat.up': pinged.includes(id) ? 1 : 0 };
        for (const [kind, n] of Object.entries(expected)) {
          const got = count(id, kind);
          if (got < n) {
            lost += n - got;
            anomalies.push(`${id}: ${got} ${kind}, expected ${n}`);
          }
          if (got > n) {
            duplicated += got - n;
            anomalies.push(`${id}: ${got} ${kind}, expected ${n}`);
          }
        }
      }
      const streamIds = stream.map((e) => e.data.id as string);
      const republished =
        events.items.filter((e) => ours.has(e.event.subject.id) && alertKinds.has(e.event.kind)).length - new Set(streamIds).size;
      await eventually(async () => deliveriesOf(streamIds).missing.length === 0, 'a webhook delivery per alert', 60_000, 200).catch(
        () => {},
      );
      const d = deliveriesOf(streamIds);
      lost += d.missing.length;
      duplicated += d.doubled;
      const orphanCount = cycles.reduce((n, cy) => n + cy.orphans.length, 0);
      const early = cycles.filter((cy) => cy.dueBeforePause).length;
      const reasons = new Map<string, number>();
      for (const w of cycles.flatMap((cy) => cy.why)) reasons.set(w, (reasons.get(w) ?? 0) + 1);
      rows.push({
        fault,
        cycles: cycles.length,
        recovery_ms: { p50: percentile(recoveries, 50), max: percentile(recoveries, 100) },
        lost,
        duplicated,
        notes:
          `2 deadline processes, ${partitions} partitions; recovery: SIGSTOP until every miss (due 8 s after creation) and ping of the ` +
          `paused process's partitions was raised by the other (lease TTL 10 s). ${created.length} heartbeats, ${orphanCount} alerts ` +
          `owed by paused partitions, ${stream.length} alerts on EVENTS, ${sink.requests.length} webhook deliveries in all; ` +
          `${Math.max(0, republished)} event ids published more than once (dropped by the EVENTS duplicate window). ` +
          `Woken processes dropped their partitions because: ${[...reasons].map(([w, n]) => `${w} (${n})`).join(', ')}; ` +
          `they did so ${cycles
            .filter((cy) => !cy.midRound)
            .map((cy) => cy.staleMs)
            .join(', ')} ms after SIGCONT when frozen between lease rounds, ` +
          `${
            cycles
              .filter((cy) => cy.midRound)
              .map((cy) => cy.staleMs)
              .join(', ') || '-'
          } ms when frozen in the middle of one ` +
          `(their deadline heaps firing meanwhile for misses the other process had raised).` +
          (early > 0 ? ` In ${early} cycle(s) the misses came due before the pause.` : '') +
          (anomalies.length > 0 ? ` Anomalies: ${anomalies.slice(0, 5).join('; ')}` : ''),
      });

      assert.deepEqual(anomalies, []);
      assert.equal(written.length, stream.length, 'one outbox row per alert on EVENTS');
      assert.equal(new Set(streamIds).size, streamIds.length, 'each event once on EVENTS');
      assert.deepEqual(d.missing, [], 'a webhook delivery for every alert');
      assert.equal(d.doubled, 0, 'no alert delivered twice');
      assert.equal(d.doubledKeys, 0, 'no delivery id sent twice');
      assert.equal(cycles.length, CYCLES);
    } catch (err) {
      recordFailure(fault, completed, recoveries, err);
      throw err;
    }
  });
});
