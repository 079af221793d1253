import type { KV } from '@nats-io/kv';
import { AgentPresence } from '../../../../shared/src/contracts/agent.ts';
import type { Assignment } from '../../../../shared/src/contracts/monitoring.ts';
import { open, seal } from '../../../../shared/src/crypto.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import { agentPresenceTtlMs, openBucket } from '../../../../shared/src/provision.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { safeJson, watchAll } from '../../platform/nats/kv-watch.ts';
import { changedAt, checkTarget, storedEntry, type StoredEntry } from './changes.ts';
import { loadAssignable } from '../repo.ts';
import { desiredEntries, regionTypes, type LiveAgent } from './desired.ts';

export interface AssignerOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  replicas: number;
  /** Seals credentials a stored URL still holds, for the agents (the check-credentials key). */
  checkKey: Buffer;
  now?: () => number;
  /** How often the live region set is re-read from presence. */
  regionCheckMs?: number;
}

export interface Assigner {
  regions(): ReadonlySet<string>;
  /** Brings KV `assignments` in line with Postgres, the truth. */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The assign role. Postgres is the truth, KV `assignments` its projection for agents: every
 * monitor change arrives through LISTEN/NOTIFY (a trigger on monitors) and is mirrored at once;
 * at start-up, after a lost database connection and whenever a region appears or disappears, a
 * full reconcile puts what is missing or stale and deletes entries without a monitor. Each entry
 * carries `changed_at`, when what it checks last became new (changes.ts), from which the owning
 * agent checks a new, re-activated or edited monitor at once.
 */
export async function startAssigner(opts: AssignerOptions): Promise<Assigner> {
  const log = opts.log.child({ component: 'assigner' });
  const sealPassword = (password: string) => seal(password, opts.checkKey);
  const openPassword = (sealed: string) => {
    try {
      return open(sealed, opts.checkKey);
    } catch {
      return undefined;
    }
  };
  const now = opts.now ?? Date.now;
  const kv: KV = await openBucket(opts.nc, opts.names, 'assignments', { replicas: opts.replicas });
  const agentsKv: KV = await openBucket(opts.nc, opts.names, 'agents', { replicas: opts.replicas });

  // What the bucket holds, key -> revision and what it checks, kept current by a watch (our own
  // writes included): a write compares with it to tell a change of target from any other edit.
  const current = new Map<string, StoredEntry>();
  const assignmentsWatch = await watchAll(kv, (e) => {
    if (e.operation === 'PUT') current.set(e.key, storedEntry(safeJson(e), openPassword));
    else current.delete(e.key);
  });

  // Live agents per region, from presence; an entry older than the bucket TTL is dead even if
  // no delete marker reached us. Both watches have caught up before the first reconcile, so a
  // restart never mistakes "not read yet" for "no agents" and unassigns everything.
  const presence = new Map<string, { seen: number; agent: LiveAgent }>();
  const agentsWatch = await watchAll(agentsKv, (e) => {
    if (e.operation !== 'PUT') {
      presence.delete(e.key);
      return;
    }
    const parsed = AgentPresence.safeParse(safeJson(e));
    const region = e.key.slice(0, e.key.indexOf('.'));
    presence.set(e.key, {
      seen: parsed.success ? Date.parse(parsed.data.seen_at) : e.created.getTime(),
      agent: { region, checkTypes: parsed.success ? (parsed.data.check_types ?? null) : null },
    });
  });
  await Promise.all([assignmentsWatch.caughtUp, agentsWatch.caughtUp]);
  let regions = new Map<string, ReadonlySet<string>>();
  const liveRegions = () =>
    regionTypes(
      (function* () {
        for (const { seen, agent } of presence.values()) if (now() - seen <= agentPresenceTtlMs) yield agent;
      })(),
    );
  /** The live regions and their types as one comparable text. */
  const signature = (live: ReadonlyMap<string, ReadonlySet<string>>) =>
    [...live]
      .map(([region, types]) => `${region}:${[...types].sort().join(',')}`)
      .sort()
      .join(' ');

  // One operation at a time: a reconcile and a single-monitor sync never interleave.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn, fn);
    chain = next.catch(() => {});
    return next;
  };

  const apply = async (desired: Map<string, Assignment>, scope: (key: string) => boolean) => {
    let puts = 0;
    let deletes = 0;
    for (const [key, value] of desired) {
      const stored = current.get(key);
      if (stored?.revision === value.revision) continue;
      const target = checkTarget(value, openPassword);
      const changed = changedAt(stored, target, value.revision);
      await kv.put(key, JSON.stringify(changed === undefined ? value : { ...value, changed_at: changed }));
      current.set(key, { revision: value.revision, target, changedAt: changed });
      puts++;
    }
    for (const key of [...current.keys()]) {
      if (scope(key) && !desired.has(key)) {
        await kv.delete(key);
        current.delete(key);
        deletes++;
      }
    }
    return { puts, deletes };
  };

  const reconcile = () =>
    serial(async () => {
      regions = liveRegions();
      const desired = new Map<string, Assignment>();
      for (const m of await loadAssignable(opts.sql))
        for (const [k, v] of desiredEntries(m, regions, opts.names, sealPassword)) desired.set(k, v);
      const { puts, deletes } = await apply(desired, () => true);
      log.info({ regions: [...regions.keys()], assignments: desired.size, puts, deletes }, 'assignments reconciled');
    });

  const sync = (monitorId: string) =>
    serial(async () => {
      const [m] = await loadAssignable(opts.sql, monitorId);
      const desired = m ? desiredEntries(m, regions, opts.names, sealPassword) : new Map<string, Assignment>();
      const { puts, deletes } = await apply(desired, (key) => key.endsWith(`.${monitorId}`));
      log.debug({ monitorId, puts, deletes }, 'monitor assignment synced');
    });

  const failed = (what: string) => (err: unknown) => log.error({ err }, `${what} failed`);
  const listener = await opts.sql.listen(
    'monitor_changes',
    (id) => void sync(id).catch(failed('assignment sync')),
    // Runs on the first LISTEN and after every reconnect: changes may have been missed meanwhile.
    () => void reconcile().catch(failed('reconcile')),
  );

  const regionTimer = setInterval(() => {
    const next = liveRegions();
    if (signature(next) !== signature(regions)) {
      log.info({ from: signature(regions), to: signature(next) }, 'live regions or the monitor types their agents run changed');
      void reconcile().catch(failed('reconcile'));
    }
  }, opts.regionCheckMs ?? 2_500);

  return {
    regions: () => new Set(regions.keys()),
    reconcile,
    async stop() {
      clearInterval(regionTimer);
      await listener.unlisten();
      assignmentsWatch.stop();
      agentsWatch.stop();
      await chain;
    },
  };
}
