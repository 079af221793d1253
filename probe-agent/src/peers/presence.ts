import { hostname } from 'node:os';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import { AgentPresence } from '../../../shared/src/contracts/agent.ts';
import { monitorTypes } from '../../../shared/src/contracts/checks.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import { version } from '../../../shared/src/version.ts';
import { settledWithin } from '../timing.ts';
import { createLiveSet } from './live-set.ts';

export type PresenceOptions = {
  kv: KV;
  names: Names;
  region: string;
  agentId: string;
  log: Logger;
  /** How often this agent refreshes its key. */
  periodMs: number;
  /** A peer not heard from for this long is dead (the bucket's max age). */
  ttlMs: number;
  /** The live set of the region changed (members sorted, this agent included). */
  onChange: (members: string[]) => void;
  /** The canaries' last counts, carried with every refresh. */
  canaries?: () => AgentPresence['canaries'];
  now?: () => number;
};

export type Presence = {
  /** Announces this agent, then resolves once the region's current agents were read. */
  start(): Promise<void>;
  members(): string[];
  /** Peers with a live presence other than this agent, as last known. */
  peerCount(): number;
  /** While NATS is away no peer expires; when it is back every peer gets a fresh ttl. */
  setConnected(connected: boolean): void;
  /** Stops refreshing and removes this agent's key, so peers take its monitors over at once. */
  stop(): Promise<void>;
};

const snapshotWaitMs = 5_000;

/**
 * Presence in KV `agents`: this agent's key refreshed every period, and a watch over the bucket
 * that keeps the region's live set. The whole bucket is watched and filtered by the value's
 * region (shared/ has no key pattern for one region's agents); a bucket holds few keys.
 */
export function createPresence(opts: PresenceOptions): Presence {
  const now = opts.now ?? Date.now;
  const log = opts.log;
  const selfKey = opts.names.keys.agent(opts.region, opts.agentId);
  const startedAt = new Date(now()).toISOString();
  const live = createLiveSet({ self: opts.agentId, ttlMs: opts.ttlMs });
  /** Presence key -> agent id, so a delete (which carries no value) can be attributed. */
  const agentOfKey = new Map<string, string>();
  let connected = true;
  let stopped = false;
  let initialized = false;
  let markInitialized = () => {};
  let watch: QueuedIterator<KvWatchEntry> | undefined;
  let announcing: Promise<void> | undefined;
  let failing = false;
  let refreshTimer: NodeJS.Timeout | undefined;
  let expireTimer: NodeJS.Timeout | undefined;

  const changed = () => opts.onChange(live.members());

  async function put(): Promise<void> {
    const presence: AgentPresence = {
      agent_id: opts.agentId,
      region: opts.region,
      version,
      hostname: hostname(),
      started_at: startedAt,
      seen_at: new Date(now()).toISOString(),
      check_types: [...monitorTypes],
    };
    const canaries = opts.canaries?.();
    if (canaries) presence.canaries = canaries;
    await opts.kv.put(selfKey, JSON.stringify(AgentPresence.parse(presence)));
  }

  function refresh(): void {
    if (announcing || stopped) return;
    announcing = put()
      .then(() => {
        if (failing) log.info('presence refreshed again');
        failing = false;
      })
      .catch((err: unknown) => {
        if (!failing) log.warn({ err }, 'presence refresh failed');
        failing = true;
      })
      .finally(() => {
        announcing = undefined;
      });
  }

  function onEntry(e: KvWatchEntry): void {
    if (e.operation === 'PUT') {
      let presence: AgentPresence;
      try {
        presence = AgentPresence.parse(e.json());
      } catch (err) {
        log.warn({ key: e.key, err }, 'ignored an invalid agent presence');
        return;
      }
      if (presence.region !== opts.region) return;
      if (presence.agent_id === opts.agentId) {
        if (presence.started_at !== startedAt) log.error({ hostname: presence.hostname }, 'another agent runs under this agent id');
        return;
      }
      if (e.key !== opts.names.keys.agent(presence.region, presence.agent_id)) {
        log.warn({ key: e.key }, 'ignored an agent presence stored under a key not its own');
        return;
      }
      agentOfKey.set(e.key, presence.agent_id);
      // A replayed entry may be up to ttl old: its server timestamp says how old.
      const at = initialized ? now() : Math.min(now(), e.created.getTime());
      if (live.seen(presence.agent_id, at)) {
        log.info({ peer: presence.agent_id }, 'agent joined the region');
        changed();
      }
    } else {
      const agentId = agentOfKey.get(e.key);
      agentOfKey.delete(e.key);
      if (agentId !== undefined && live.left(agentId)) {
        log.info({ peer: agentId }, 'agent left the region');
        changed();
      }
    }
  }

  function expire(): void {
    if (!connected || stopped) return;
    const gone = live.expire(now());
    if (gone.length === 0) return;
    log.info({ peers: gone }, 'agent presence went stale: taking over');
    changed();
  }

  async function follow(iter: QueuedIterator<KvWatchEntry>): Promise<void> {
    try {
      for await (const e of iter) {
        onEntry(e);
        // The last entry of the initial replay is the first one flagged as an update.
        if (!initialized && e.isUpdate) {
          initialized = true;
          markInitialized();
        }
      }
    } catch (err) {
      if (!stopped) log.error({ err }, 'agent presence watch ended');
    }
  }

  return {
    async start() {
      await put();
      const snapshot = new Promise<void>((resolve) => (markInitialized = resolve));
      watch = await opts.kv.watch();
      void follow(watch);
      // The replay always holds this agent's own key, so it ends with a flagged entry.
      if (!(await settledWithin(snapshot, snapshotWaitMs))) log.warn('agent presence replay incomplete; going on');
      initialized = true;
      refreshTimer = setInterval(refresh, opts.periodMs);
      expireTimer = setInterval(expire, Math.max(10, Math.round(opts.periodMs / 5)));
    },
    members: () => live.members(),
    peerCount: () => live.members().length - 1,
    setConnected(value) {
      if (value && !connected) {
        live.refreshAll(now());
        refresh();
      }
      connected = value;
    },
    async stop() {
      stopped = true;
      clearInterval(refreshTimer);
      clearInterval(expireTimer);
      watch?.stop();
      // A refresh landing after the delete would keep this agent "alive" for a whole ttl.
      if (announcing) await settledWithin(announcing, 2_000);
      await settledWithin(opts.kv.delete(selfKey), 2_000);
    },
  };
}
