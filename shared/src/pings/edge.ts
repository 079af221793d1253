import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { KV } from '@nats-io/kv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ping } from '../contracts/pings.ts';
import type { AnyFastify } from '../health.ts';
import type { NatsConnection } from '../nats.ts';
import type { Names } from '../subjects.ts';
import { batchLookups, kvLookup, type HeartbeatLookup } from './lookup.ts';
import { pingPartition } from './partition.ts';
import { createAckPublisher } from '../ack-publisher.ts';
import { createRateLimiter } from '../rate-limit.ts';
import { bodyExcerpt, parsePingTarget, readBodyHead } from './request.ts';
import { isUuid } from '../uuid.ts';

export { kvLookup, type HeartbeatLookup } from './lookup.ts';

/** A ping's body as the content parser leaves it: the kept text, and the size of the whole. */
interface PingBody {
  text: string;
  size: number;
}

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
  /** PING_RATE_LIMIT: pings a minute per heartbeat at this edge, in bursts up to the same; 0 or absent: no limit. */
  perHeartbeatPerMinute?: number;
  /** PING_BODY_LIMIT: bytes of a request body kept with the ping (default 100 KB). */
  bodyLimit?: number;
}

/**
 * A probe agent passes KV `heartbeats` (the ids an edge may accept, kept by the deadline role);
 * the control plane passes a lookup of its own, in Postgres. Either is asked for many ids at once.
 */
export type PingEdgeOptions = EdgeBase & ({ heartbeats: KV; lookup?: undefined } | { lookup: HeartbeatLookup; heartbeats?: undefined });

const TEXT = 'text/plain; charset=utf-8';

function answer(reply: FastifyReply, status: number, text: string): FastifyReply {
  return (
    reply
      .code(status)
      .header('content-type', TEXT)
      .header('cache-control', 'no-store')
      // Pings may come from a browser page (a job in a tab); the answer reveals nothing.
      .header('access-control-allow-origin', '*')
      .send(text)
  );
}

/** The run id of `?rid=`: null when absent or empty, undefined when it is not a UUID. */
function runIdOf(query: unknown): string | null | undefined {
  const rid = (query as Record<string, unknown> | undefined)?.rid;
  if (rid === undefined || rid === '') return null;
  return typeof rid === 'string' && isUuid(rid) ? rid.toLowerCase() : undefined;
}

const unavailable = (reply: FastifyReply) => answer(reply.header('retry-after', '5'), 503, 'Service temporarily unavailable');

/**
 * Registers the ping URLs on `app`: `/heartbeat/<id>`, `/start`, `/fail` and `/<exit code>`,
 * for GET, POST and HEAD, each with an optional run id (`?rid=<uuid>`). 200 `OK` once JetStream
 * has the ping, 400 for a run id that is not a UUID, 404 for an id that is not a heartbeat, 429
 * (Retry-After) beyond the heartbeat's rate at this edge, 503 (Retry-After) when NATS cannot take
 * it: a 200 is a promise the ping is stored, so an edge never buffers one. Bodies of any type are
 * read to the end and the first `bodyLimit` bytes kept.
 */
export async function registerPingEdge(app: AnyFastify, opts: PingEdgeOptions): Promise<void> {
  const publisher = createAckPublisher(opts.nc, { budgetMs: opts.publishBudgetMs ?? 8_000 });
  const isKnown = batchLookups(opts.lookup ?? kvLookup(opts.heartbeats!), { timeoutMs: opts.lookupTimeoutMs ?? 3_000 });
  const now = opts.now ?? (() => new Date());
  // A job calling its ping URL in a loop is refused here, before its pings reach the stream.
  const limiter = opts.perHeartbeatPerMinute ? createRateLimiter({ perMinute: opts.perHeartbeatPerMinute }) : undefined;

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const params = req.params as { id: string; suffix?: string };
    const target = parsePingTarget(params.id, params.suffix);
    if (!target) return answer(reply, 404, 'Not found');
    const rid = runIdOf(req.query);
    if (rid === undefined) return answer(reply, 400, 'rid must be a UUID');
    let known: boolean;
    try {
      known = await isKnown(target.heartbeatId);
    } catch (err) {
      req.log.warn({ err, heartbeatId: target.heartbeatId }, 'ping refused: heartbeat lookup failed');
      return unavailable(reply);
    }
    if (!known) return answer(reply, 404, 'Not found');
    const wait = limiter?.take(target.heartbeatId, now().getTime()) ?? 0;
    if (wait > 0) return answer(reply.header('retry-after', String(wait)), 429, 'Too many pings');

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
      ...(rid ? { rid } : {}),
    };
    const subject = opts.names.subjects.ping(pingPartition(ping.heartbeat_id, opts.partitions), ping.heartbeat_id);
    if (!(await publisher.publish(subject, JSON.stringify(ping), ping.id))) {
      req.log.warn({ heartbeatId: ping.heartbeat_id, pingId: ping.id }, 'ping refused: JetStream did not acknowledge it');
      return unavailable(reply);
    }
    return answer(reply, 200, 'OK');
  };

  // After the server stopped taking requests, so that every ping in flight gets its answer.
  app.addHook('onClose', async () => publisher.close());

  // A ping is one line in the ping log and a count in the metrics: at thousands a second, two
  // access-log lines each would cost more than the ping. Refusals are still logged, as warnings.
  const level = app.log.level;
  const logLevel = level === 'error' || level === 'fatal' || level === 'silent' ? level : 'warn';

  await app.register(async (scope: AnyFastify) => {
    // Bodies are logs of any type (often plain text posted as form data): read as bytes, never parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req: FastifyRequest, payload: Readable, done: (err: Error | null, body?: unknown) => void) => {
      readBodyHead(payload, opts.bodyLimit).then(
        ({ head, size }) => done(null, { text: bodyExcerpt(head, size > head.length), size } satisfies PingBody),
        (err: Error) => done(err),
      );
    });
    for (const url of ['/heartbeat/:id', '/heartbeat/:id/:suffix']) {
      scope.route({ method: ['GET', 'POST'], url, exposeHeadRoute: true, logLevel, schema: { hide: true }, handler: handle });
      scope.route({
        method: ['PUT', 'PATCH', 'DELETE'],
        url,
        logLevel,
        schema: { hide: true },
        handler: (_req: FastifyRequest, reply: FastifyReply) => answer(reply.header('allow', 'GET, POST, HEAD'), 405, 'Method not allowed'),
      });
    }
  });
}
