import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import {
  guardedLookup,
  refuses,
  resolveAllowed,
  systemResolve,
  type AddressPolicy,
  type Resolve,
} from '../../../../shared/src/net/lookup.ts';
import { version } from '../../../../shared/src/version.ts';
import { DeliveryError } from '../errors.ts';

export interface HttpResponse {
  status: number;
  body: string;
}

export interface HttpClient {
  /** POSTs and resolves on a 2xx; anything else throws a DeliveryError saying whether to retry. */
  post(url: string, opts: { json?: unknown; body?: string; headers?: Record<string, string> }): Promise<HttpResponse>;
  /**
   * For a channel that connects by other means (SMTP): the address to dial for `hostname` when
   * private targets are blocked, checked once, so the connection cannot be sent elsewhere by a
   * second DNS answer; undefined when nothing is blocked. A forbidden one is a permanent DeliveryError.
   */
  pinAddress(hostname: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export interface HttpOptions extends AddressPolicy {
  timeoutMs?: number;
  /** How host names are resolved (getaddrinfo by default). */
  resolve?: Resolve;
}

export const userAgent = `uptime-notify/${version}`;
const MAX_BODY = 16 * 1024;
const MAX_CONNECTIONS_PER_ORIGIN = 64;

/** 408 and 429 say "later"; every other 4xx says the message itself is refused. */
export function isPermanentStatus(status: number): boolean {
  return status >= 300 && status < 500 && status !== 408 && status !== 429;
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function readCapped(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    if (size < MAX_BODY) chunks.push(c);
    size += c.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY);
}

const blockedMessage = (host: string, address: string) => `${host}: address ${address} is not allowed (BLOCK_PRIVATE_TARGETS)`;

/**
 * The HTTP side of every channel: undici with a total time limit, and, when private targets are
 * blocked, a resolver that refuses internal addresses (checked on the address actually dialled,
 * so a DNS name cannot smuggle one in). Redirects are never followed: a webhook that answers 3xx
 * has not taken the message, and following it would let any public URL send us inside.
 * Error texts name the host only: URLs often hold tokens.
 */
export function createHttpClient(opts: HttpOptions): HttpClient {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const resolve = opts.resolve ?? systemResolve;
  const agent = new Agent({
    // Kept alive and reused (undici's default), at most this many at once to one receiver: the
    // workers may have more sends in flight than one receiver should take at once; the rest wait
    // here for a connection, already claimed, instead of waiting for a claim.
    connections: MAX_CONNECTIONS_PER_ORIGIN,
    connect: { timeout: timeoutMs, lookup: guardedLookup(opts, resolve) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  return {
    async post(url, { json, body, headers }) {
      const target = new URL(url);
      const host = target.host;
      const literal = target.hostname.replace(/^\[|\]$/g, '');
      if (isIP(literal) && refuses(opts, literal)) throw new DeliveryError(blockedMessage(host, literal), { permanent: true });
      let res;
      try {
        res = await request(target, {
          method: 'POST',
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
          headers: {
            'user-agent': userAgent,
            ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
            ...headers,
          },
          body: json !== undefined ? JSON.stringify(json) : body,
        });
      } catch (err) {
        const e = err as {
          code?: string;
          name?: string;
          message?: string;
          address?: string;
          cause?: { code?: string; message?: string; address?: string };
        };
        const blocked = e.code === 'ERR_BLOCKED_TARGET' ? e : e.cause?.code === 'ERR_BLOCKED_TARGET' ? e.cause : undefined;
        if (blocked) throw new DeliveryError(blockedMessage(host, blocked.address ?? 'of this host'), { permanent: true });
        const what =
          e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : `${e.code ?? e.name}: ${e.message}`;
        throw new DeliveryError(`${host}: ${what}`, { permanent: false });
      }
      const text = await readCapped(res.body).catch(() => '');
      if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, body: text };
      if (res.statusCode >= 300 && res.statusCode < 400) {
        throw new DeliveryError(`HTTP ${res.statusCode} from ${host}: redirects are not followed`, { permanent: true });
      }
      const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200);
      throw new DeliveryError(`HTTP ${res.statusCode} from ${host}${excerpt ? `: ${excerpt}` : ''}`, {
        permanent: isPermanentStatus(res.statusCode),
        retryAfterMs: retryAfterMs(res.headers['retry-after']),
      });
    },
    async pinAddress(hostname) {
      if (!opts.blockPrivateTargets) return undefined;
      const bare = hostname.replace(/^\[|\]$/g, '');
      if (isIP(bare)) {
        if (refuses(opts, bare)) throw new DeliveryError(blockedMessage(hostname, bare), { permanent: true });
        return bare;
      }
      try {
        const [first] = await resolveAllowed(opts, resolve, bare);
        if (!first) throw new DeliveryError(`${hostname}: no address`, { permanent: false });
        return first.address;
      } catch (err) {
        if (err instanceof DeliveryError) throw err;
        const e = err as { code?: string; message?: string; address?: string };
        if (e.code === 'ERR_BLOCKED_TARGET')
          throw new DeliveryError(blockedMessage(hostname, e.address ?? 'of this host'), { permanent: true });
        throw new DeliveryError(`${hostname}: ${e.code ?? 'DNS error'}: ${e.message}`, { permanent: false });
      }
    },
    close: () => agent.close(),
  };
}
