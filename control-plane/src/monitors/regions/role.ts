import { AgentPresence } from '../../../../shared/src/contracts/agent.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import { agentPresenceTtlMs, openBucket } from '../../../../shared/src/provision.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { safeJson, watchAll } from '../../platform/nats/kv-watch.ts';
import type { OutboxPublisher } from '../../platform/outbox.ts';
import type { RegionDetail } from './events.ts';
import { defaultTuning, judgeRegion, type HealthTuning, type RegionObservation } from './health.ts';
import { disagreementByRegion, forgetRegions, loadRegions, saveRegion } from './repo.ts';

export interface RegionHealthOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  replicas: number;
  clock: Clock;
  outbox: OutboxPublisher;
  /** How often the regions are judged (real time). */
  periodMs?: number;
  tuning?: HealthTuning;
}

export interface RegionHealth {
  /** Judges every region now (also done every period). */
  judgeNow(): Promise<void>;
  stop(): Promise<void>;
}

/** A region silent this long, with no fresh result anywhere, is forgotten. */
const FORGET_AFTER_MS = 7 * 24 * 3_600_000;

interface Seen {
  region: string;
  seenAt: number;
  canaries?: { total: number; failing: number };
}

/**
 * Part of the assign role: judges every probe region (health.ts) from the agents' presence
 * (KV `agents`, with their canaries) and from how the regions' latest results agree
 * (monitor_regions), and stores the judgement in region_health, which the ingest reads with
 * every batch: a degraded region abstains. A change is recorded with its event
 * (region.degraded, region.recovered) by one process, whichever many run the role.
 */
export async function startRegionHealth(opts: RegionHealthOptions): Promise<RegionHealth> {
  const log = opts.log.child({ component: 'region-health' });
  const tuning = opts.tuning ?? defaultTuning;
  const agentsKv = await openBucket(opts.nc, opts.names, 'agents', { replicas: opts.replicas });
  const agents = new Map<string, Seen>();
  const watch = await watchAll(agentsKv, (e) => {
    if (e.operation !== 'PUT') {
      agents.delete(e.key);
      return;
    }
    const parsed = AgentPresence.safeParse(safeJson(e));
    if (!parsed.success) return;
    const p = parsed.data;
    agents.set(e.key, {
      region: p.region,
      seenAt: Date.parse(p.seen_at),
      ...(p.canaries ? { canaries: { total: p.canaries.total, failing: p.canaries.failing } } : {}),
    });
  });
  await watch.caughtUp;
  // A region is silent only after a while without agents: a process that just started has
  // not seen any yet, and every stored region gets that while from now.
  const lastSeen = new Map<string, number>();
  const startedAt = opts.clock.now();

  const observe = (now: number, disagreement: Map<string, { compared: number; disagreeing: number }>) => {
    const byRegion = new Map<string, RegionObservation>();
    const get = (region: string) => {
      let o = byRegion.get(region);
      if (!o) {
        const d = disagreement.get(region);
        o = {
          agents: 0,
          lastSeenAt: lastSeen.get(region) ?? startedAt,
          canaryAgents: 0,
          canaryAgentsFailing: 0,
          compared: d?.compared ?? 0,
          disagreeing: d?.disagreeing ?? 0,
        };
        byRegion.set(region, o);
      }
      return o;
    };
    for (const a of agents.values()) {
      if (now - a.seenAt > agentPresenceTtlMs) continue;
      const o = get(a.region);
      o.agents++;
      lastSeen.set(a.region, now);
      o.lastSeenAt = now;
      if (a.canaries) {
        o.canaryAgents++;
        if (a.canaries.failing * 2 > a.canaries.total) o.canaryAgentsFailing++;
      }
    }
    for (const region of disagreement.keys()) get(region);
    return { byRegion, get };
  };

  let running: Promise<void> | undefined;
  const judge = async () => {
    const now = opts.clock.now();
    const at = new Date(now);
    const [stored, disagreement] = await Promise.all([loadRegions(opts.sql), disagreementByRegion(opts.sql, at)]);
    const { byRegion, get } = observe(now, disagreement);
    for (const s of stored) get(s.region);
    const storedBy = new Map(stored.map((s) => [s.region, s]));
    const forget: string[] = [];
    for (const [region, o] of byRegion) {
      const prev = storedBy.get(region) ?? null;
      const { next, change } = judgeRegion(prev, o, now, tuning);
      const detail: RegionDetail = {
        agents: o.agents,
        canary_agents: o.canaryAgents,
        canary_agents_failing: o.canaryAgentsFailing,
        compared: o.compared,
        disagreeing: o.disagreeing,
      };
      if (prev && next.reason === 'silent' && !change && now - prev.since > FORGET_AFTER_MS && !disagreement.has(region)) {
        forget.push(region);
        continue;
      }
      if (prev && !change && next.reason === prev.reason && sameDetail(prev.detail, detail)) continue;
      const event = await saveRegion(opts.sql, region, prev, next, change, detail, at);
      if (event) {
        log.warn({ region, change, reason: next.reason ?? prev?.reason, ...detail }, `region ${change}`);
        await opts.outbox.publish([event]);
      }
    }
    await forgetRegions(opts.sql, forget);
  };
  const judgeNow = () =>
    (running ??= judge()
      .catch((err: unknown) => log.error({ err }, 'judging regions failed'))
      .finally(() => (running = undefined)));

  const timer = setInterval(() => void judgeNow(), opts.periodMs ?? 5_000);
  void judgeNow();
  return {
    judgeNow,
    async stop() {
      clearInterval(timer);
      watch.stop();
      await running;
    },
  };
}

function sameDetail(a: RegionDetail | undefined, b: RegionDetail): boolean {
  return (
    !!a &&
    a.agents === b.agents &&
    a.canary_agents === b.canary_agents &&
    a.canary_agents_failing === b.canary_agents_failing &&
    a.compared === b.compared &&
    a.disagreeing === b.disagreeing
  );
}
