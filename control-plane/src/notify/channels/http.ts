import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { isBlockedAddress } from '../../../../probe-agent/src/check/address.ts';
import { version } from '../../../../shared/src/version.ts';
import { DeliveryError } from '../errors.ts';

export interface HttpResponse {
  status: number;
  body: string;
}

export interface HttpClient {
  /** POSTs and resolves on a 2xx; anything else throws a DeliveryError saying whether to retry. */
  post(url: string, opts: { json?: unknown; body?: string; headers?: Record<string, string> }): Promise<HttpResponse>;
  close(): Promise<void>;
}

export interface HttpOptions {
  blockPrivateTargets: boolean;
  timeoutMs?: number;
}

export const userAgent = `uptime-notify/${version}`;
const MAX_BODY = 16 * 1024;

class BlockedAddressError extends Error {
  readonly code = 'ERR_BLOCKED_TARGET';
  constructor(address: string) {
    super(`address ${address} is not allowed (BLOCK_PRIVATE_TARGETS)`);
  }
}

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

/**
 * The HTTP side of every channel: undici with a total time limit, and, when private targets are
 * blocked, a resolver that refuses internal addresses (checked on the address actually dialled,
 * so a DNS name cannot smuggle one in). Error texts name the host only: URLs often hold tokens.
 */
export function createHttpClient(opts: HttpOptions): HttpClient {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, found) => {
      if (err) return callback(err, '', 0);
      const blocked = found.find((a) => isBlockedAddress(a.address));
      if (blocked) return callback(new BlockedAddressError(blocked.address), '', 0);
      if (options.all) return callback(null, found);
      const first = found[0]!;
      callback(null, first.address, first.family);
    });
  };
  const agent = new Agent({
    connect: { timeout: timeoutMs, ...(opts.blockPrivateTargets ? { lookup } : {}) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  return {
    async post(url, { json, body, headers }) {
      const target = new URL(url);
      const host = target.host;
      const literal = target.hostname.replace(/^\[|\]$/g, '');
      if (opts.blockPrivateTargets && isIP(literal) && isBlockedAddress(literal)) {
        throw new DeliveryError(`address ${literal} is not allowed (BLOCK_PRIVATE_TARGETS)`, { permanent: true });
      }
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
        const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
        const code = e.code === 'ERR_BLOCKED_TARGET' || e.cause?.code === 'ERR_BLOCKED_TARGET' ? 'ERR_BLOCKED_TARGET' : e.code;
        if (code === 'ERR_BLOCKED_TARGET') {
          throw new DeliveryError(`${host}: ${e.cause?.message ?? e.message}`, { permanent: true });
        }
        const what = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : `${code ?? e.name}: ${e.message}`;
        throw new DeliveryError(`${host}: ${what}`, { permanent: false });
      }
      const text = await readCapped(res.body).catch(() => '');
      if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, body: text };
      const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200);
      throw new DeliveryError(`HTTP ${res.statusCode} from ${host}${excerpt ? `: ${excerpt}` : ''}`, {
        permanent: isPermanentStatus(res.statusCode),
        retryAfterMs: retryAfterMs(res.headers['retry-after']),
      });
    },
    close: () => agent.close(),
  };
}
