import {
  DiscardPolicy,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV, type KvOptions } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import type { Names } from './subjects.ts';

const DAY = 24 * 60 * 60 * 1000;

type StreamSpec = Partial<StreamConfig> & { name: string };

export interface ProvisionOptions {
  /** JetStream replicas of every stream and bucket (1 on a single server, 3 on a cluster). */
  replicas: number;
  /** How long RESULTS keeps checks for outside consumers (ingest reads them within seconds). */
  resultsMaxAgeMs?: number;
}

/** The streams of the product. Their subjects and message schemas are documented in docs/streams.md. */
export function streamConfigs(names: Names, opts: ProvisionOptions): StreamSpec[] {
  const base = { storage: StorageType.File, num_replicas: opts.replicas, discard: DiscardPolicy.Old };
  return [
    {
      ...base,
      name: names.streams.results,
      subjects: [names.subjects.results],
      retention: RetentionPolicy.Limits,
      max_age: nanos(opts.resultsMaxAgeMs ?? 7 * DAY),
      // An agent may hold results for minutes while NATS is away; a replay inside this window is dropped by the server.
      duplicate_window: nanos(10 * 60 * 1000),
    },
    {
      ...base,
      name: names.streams.pings,
      subjects: [names.subjects.pings],
      retention: RetentionPolicy.Limits,
      max_age: nanos(7 * DAY),
      duplicate_window: nanos(2 * 60 * 1000),
    },
    {
      ...base,
      name: names.streams.events,
      subjects: [names.subjects.events],
      retention: RetentionPolicy.Limits,
      max_age: nanos(30 * DAY),
      duplicate_window: nanos(10 * 60 * 1000),
    },
  ];
}

/** Creates each stream, or brings an existing one to this configuration. Safe to run concurrently. */
export async function ensureStreams(nc: NatsConnection, names: Names, opts: ProvisionOptions): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const cfg of streamConfigs(names, opts)) await ensureStream(jsm, cfg);
}

async function ensureStream(jsm: JetStreamManager, cfg: StreamSpec): Promise<void> {
  const name = cfg.name;
  const existing = await jsm.streams.info(name).catch(() => undefined);
  if (!existing) {
    try {
      await jsm.streams.add(cfg);
      return;
    } catch (err) {
      // Another process created it first: fall through to an update.
      if (!(await jsm.streams.info(name).catch(() => undefined))) throw err;
    }
  }
  const { retention: _r, storage: _s, ...mutable } = cfg;
  await jsm.streams.update(name, mutable);
}

export const agentPresenceTtlMs = 15_000;

/** The KV buckets, created on first use by whichever process gets there first. */
export function bucketOptions(opts: ProvisionOptions): Record<'assignments' | 'agents' | 'heartbeats' | 'leases', Partial<KvOptions>> {
  const base = { replicas: opts.replicas, history: 1, storage: StorageType.File };
  return {
    assignments: { ...base },
    agents: { ...base, ttl: agentPresenceTtlMs },
    heartbeats: { ...base },
    leases: { ...base, ttl: 10_000 },
  };
}

export async function openBucket(nc: NatsConnection, names: Names, which: keyof Names['buckets'], opts: ProvisionOptions): Promise<KV> {
  return new Kvm(nc).create(names.buckets[which], bucketOptions(opts)[which]);
}
