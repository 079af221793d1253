import { z } from 'zod';

export const pingKinds = ['success', 'start', 'fail'] as const;
export const PingKind = z.enum(pingKinds);
export type PingKind = z.infer<typeof PingKind>;

export const pingMethods = ['GET', 'POST', 'HEAD'] as const;

/** Bytes of a request body an edge keeps with a ping by default (PING_BODY_LIMIT); the rest is read and dropped. */
export const PING_BODY_LIMIT = 100 * 1024;

/** The most PING_BODY_LIMIT may be: a ping, its body escaped as JSON, stays well inside NATS's 1 MB message limit. */
export const PING_BODY_LIMIT_MAX = 256 * 1024;

/**
 * One call of a ping URL, published on `<ns>.pings.<partition>.<heartbeat_id>` (partition:
 * `pingPartition`) with `Nats-Msg-Id` = `id`, a random uuid per HTTP request: a client that
 * retries sends a new ping, an edge that retries a publish does not. The deadline actors order
 * pings by the stream's own timestamp, not by `received_at`, so edges with skewed clocks cannot
 * reorder a job's /start and its completion. A public contract (docs/streams.md).
 */
export const Ping = z.object({
  id: z.uuid(),
  heartbeat_id: z.uuid(),
  kind: PingKind,
  /** The code of an exit-code ping (`/heartbeat/<id>/<0-255>`), else null. */
  exit_code: z.number().int().min(0).max(255).nullable(),
  /** When the edge received it, by the edge's clock. */
  received_at: z.iso.datetime(),
  /** Region of the probe agent that received it; null for the control plane's own endpoint. */
  region: z.string().max(64).nullable(),
  method: z.enum(pingMethods),
  /** The client's address as the edge saw it. */
  source: z.string().max(64),
  user_agent: z.string().max(512).nullable(),
  /**
   * The first PING_BODY_LIMIT bytes of the request body (100 KB by default) as UTF-8 (undecodable
   * bytes and NUL replaced by U+FFFD).
   */
  body: z.string().max(PING_BODY_LIMIT_MAX),
  /** Size of the whole request body in bytes. */
  body_size: z.number().int().nonnegative(),
  /** The run id of `?rid=<uuid>`: pairs a /start with its completion when runs overlap. Absent or null: none. */
  rid: z.uuid().nullable().optional(),
});
export type Ping = z.infer<typeof Ping>;

/**
 * Value of KV `heartbeats`, key `<heartbeat_id>`: the heartbeat exists, so a ping edge accepts
 * pings for it (paused ones included: their pings are recorded). Never changes while the key lives.
 */
export const HeartbeatEntry = z.object({ project_id: z.uuid() });
export type HeartbeatEntry = z.infer<typeof HeartbeatEntry>;

/**
 * Value of KV `leases`: a partition lease (`<role>.<partition>`) or a member's presence
 * (`<role>-members.<n>`), written by `holder`; the bucket's TTL ends it when not renewed.
 */
export const LeaseHolder = z.object({
  holder: z.string(),
  since: z.iso.datetime(),
});
export type LeaseHolder = z.infer<typeof LeaseHolder>;
