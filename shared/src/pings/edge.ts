import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ping } from '../contracts/pings.ts';
import type { AnyFastify } from '../health.ts';
import type { NatsConnection } from '../nats.ts';
import type { Names } from '../subjects.ts';
import { pingPartition } from './partition.ts';
import { bodyExcerpt, parsePingTarget, readBodyHead } from './request.ts';

/** A ping's body as the content parser leaves it: the kept text, and the size of the whole. */
interface PingBody {
  text: string;
  size: number;
}

/** Whether a heartbeat with this (lower-case) id exists. */
export type HeartbeatLookup = (heartbeatId: string) => Promise<boolean>;

interface EdgeBase {
  nc: NatsConnection;
  names: Names;
  /** Region of this edge (a probe agent's REGION); null for the control plane's own endpoint. */
  region: string | null;
  /** PING_PARTITIONS. */
  partitions: number;
  now?: () => Date;
  /** How long a ping may wait for JetStream's ack, retries included, before the edge answers 503 (default 8 s). */
  publishBudgetMs?: number;
  /** How long the id check may take before the edge answers 503 (default 3 s). */
  lookupTimeoutMs?: number;
}

/**
 * A probe agent passes KV `heartbeats` (the ids an edge may accept, kept by the deadline role);
 * the control plane passes a lookup of its own, in Postgres.
 */
export type PingEdgeOptions = EdgeBase & ({ heartbeats: KV; lookup?: undefined } | { lookup: HeartbeatLookup; heartbeats?: undefined });

/** An id is known when KV `heartbeats` holds it. */
export function kvLookup(kv: KV): HeartbeatLookup {
  return async (id) => (await kv.get(id))?.operation === 'PUT';
}

const TEXT = 'text/plain; charset=utf-8';

function answer(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', TEXT)
    .header('cache-control', 'no-store')
    // Pings may come from a browser page (a job in a tab); the answer reveals nothing.
    .header('access-control-allow-origin', '*')
    .send(text);
}

const unavailable = (reply: FastifyReply) => answer(reply.header('retry-after', '5'), 503, 'Service temporarily unavailable');

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Publishes until JetStream acknowledges, with the same msg id on every attempt, so a retry
 * after a lost ack is stored once. False when the budget ran out (NATS away, no stream leader).
 */
async function publishPing(js: JetStreamClient, subject: string, ping: Ping, budgetMs: number): Promise<boolean> {
  const until = Date.now() + budgetMs;
  const payload = JSON.stringify(ping);
  let backoff = 100;
  for (;;) {
    const left = until - Date.now();
    try {
      await js.publish(subject, payload, { msgID: ping.id, timeout: Math.max(1, Math.min(left, 3_000)) });
      return true;
    } catch {
      if (until - Date.now() <= backoff) return false;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 1_000);
    }
  }
}

/**
 * Registers the ping URLs on `app`: `/heartbeat/<id>`, `/start`, `/fail` and `/<exit code>`,
 * for GET, POST and HEAD. 200 `OK` once JetStream has the ping, 404 for an id that is not a
 * heartbeat, 503 (Retry-After) when NATS cannot take it: a 200 is a promise the ping is stored,
 * so an edge never buffers one. Bodies of any type are read to the end and the first 10 KB kept.
 */
export async function registerPingEdge(app: AnyFastify, opts: PingEdgeOptions): Promise<void> {
  const js = jetstream(opts.nc);
  const lookup = opts.lookup ?? kvLookup(opts.heartbeats!);
  const now = opts.now ?? (() => new Date());
  const budgetMs = opts.publishBudgetMs ?? 8_000;
  const lookupTimeoutMs = opts.lookupTimeoutMs ?? 3_000;

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const params = req.params as { id: string; suffix?: string };
    const target = parsePingTarget(params.id, params.suffix);
    if (!target) return answer(reply, 404, 'Not found');
    let known: boolean;
    try {
      known = await within(lookup(target.heartbeatId), lookupTimeoutMs);
    } catch (err) {
      req.log.warn({ err, heartbeatId: target.heartbeatId }, 'ping refused: heartbeat lookup failed');
      return unavailable(reply);
    }
    if (!known) return answer(reply, 404, 'Not found');

    const body = req.body as PingBody | undefined;
    const userAgent = req.headers['user-agent'];
    const ping: Ping = {
      id: randomUUID(),
      heartbeat_id: target.heartbeatId,
      kind: target.kind,
      exit_code: target.exitCode,
      received_at: now().toISOString(),
      region: opts.region,
      method: req.method as Ping['method'],
      source: req.ip.slice(0, 64),
      user_agent: userAgent ? userAgent.slice(0, 512) : null,
      body: body?.text ?? '',
      body_size: body?.size ?? 0,
    };
    const subject = opts.names.subjects.ping(pingPartition(ping.heartbeat_id, opts.partitions), ping.heartbeat_id);
    if (!(await publishPing(js, subject, ping, budgetMs))) {
      req.log.warn({ heartbeatId: ping.heartbeat_id, pingId: ping.id }, 'ping refused: JetStream did not acknowledge it');
      return unavailable(reply);
    }
    return answer(reply, 200, 'OK');
  };

  await app.register(async (scope: AnyFastify) => {
    // Bodies are logs of any type (often plain text posted as form data): read as bytes, never parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req: FastifyRequest, payload: Readable, done: (err: Error | null, body?: unknown) => void) => {
      readBodyHead(payload).then(
        ({ head, size }) => done(null, { text: bodyExcerpt(head, size > head.length), size } satisfies PingBody),
        (err: Error) => done(err),
      );
    });
    for (const url of ['/heartbeat/:id', '/heartbeat/:id/:suffix']) {
      scope.route({ method: ['GET', 'POST'], url, exposeHeadRoute: true, schema: { hide: true }, handler: handle });
      scope.route({
        method: ['PUT', 'PATCH', 'DELETE'],
        url,
        schema: { hide: true },
        handler: (_req: FastifyRequest, reply: FastifyReply) => answer(reply.header('allow', 'GET, POST, HEAD'), 405, 'Method not allowed'),
      });
    }
  });
}
