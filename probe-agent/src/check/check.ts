import { performance } from 'node:perf_hooks';
import { rootCertificates } from 'node:tls';
import { Agent } from 'undici';
import type { CertificateInfo } from '../../../shared/src/contracts/checks.ts';
import { abortCell, CANCELLED, createSignalWatch, TIMED_OUT, type RunCell } from './abort.ts';
import { checkFailure, type CheckError } from './classify.ts';
import { createTimedConnector } from './connector.ts';
import { createDnsCache, type Resolve } from './dns-cache.ts';
import { CAPTURE_NOTHING, sendHop, type HopCapture, type HopContext } from './hop-request.ts';
import { authorizationHeader, createUrlCache, parseUrl, redirectMethod, REDIRECTS } from './target-url.ts';
import { capturePhases, checkTimings, newHop, type CheckTimings, type Hop } from './timings.ts';

export type { CheckError, CheckErrorClass } from './classify.ts';
export type { CheckTimings } from './timings.ts';

export type CheckMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export type CheckTarget = {
  url: string;
  method: CheckMethod;
  valid_http_codes: number[];
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  timeout_ms: number;
  follow_redirects: boolean;
  /** Extra request headers (their values opened from the sealed settings); a header named here replaces the default of that name. */
  headers?: ReadonlyArray<{ name: string; value: string }>;
  /** A request body (not sent again after a redirect that turns the method into GET). */
  body?: string | null;
  /** What the response must be kept for: the check's assertions read headers and the body. */
  capture?: HopCapture;
};

export type CheckOutcome = {
  ok: boolean;
  status_code: number | null;
  timings: CheckTimings;
  error: CheckError | null;
  /** The last response's headers and body (text, cut at the body limit), when the target asked for them. */
  headers?: Record<string, string>;
  body?: string;
  /** The certificate of an https target's last hop. */
  certificate?: CertificateInfo;
};

export type CheckerOptions = {
  userAgent: string;
  blockPrivateTargets: boolean;
  /** Exact addresses exempt from blockPrivateTargets. */
  allowedAddresses?: readonly string[];
  dnsCacheTtlMs?: number;
  maxRedirects?: number;
  /** Trusted in addition to Node's bundled root CAs (an internal CA, or a test CA). */
  extraCaCerts?: Array<string | Buffer>;
  /** Response bytes read before the body is dropped; the connection is then not reused. */
  maxBodyBytes?: number;
  /** Idle keep-alive sockets are kept this long unless the server announces a shorter time. */
  keepAliveTimeoutMs?: number;
  /** Replaces getaddrinfo, for tests. */
  resolve?: Resolve;
  /** Local address checks leave from (CHECK_SOURCE_ADDRESS). */
  localAddress?: string;
};

export type Checker = {
  run(target: CheckTarget, signal?: AbortSignal): Promise<CheckOutcome>;
  close(): Promise<void>;
};

const hasStatus = (h: Hop) => h.status !== 0;

function outcome(hops: readonly Hop[], startedAt: number, error: CheckError | null): CheckOutcome {
  const out: CheckOutcome = {
    ok: error === null,
    status_code: hops.findLast(hasStatus)?.status ?? null,
    timings: checkTimings(hops, startedAt, performance.now()),
    error,
  };
  const last = hops.at(-1);
  if (last?.headers) out.headers = last.headers;
  if (last?.body) {
    // A small body comes in one chunk: decoded as it is, not copied into a new buffer first.
    out.body = last.body.length === 1 ? last.body[0]!.toString('utf8') : Buffer.concat(last.body).toString('utf8');
  }
  return out;
}

export function createChecker(opts: CheckerOptions): Checker {
  const maxRedirects = opts.maxRedirects ?? 5;
  const dns = createDnsCache({
    ttlMs: opts.dnsCacheTtlMs ?? 60_000,
    maxEntries: 10_000,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  });
  const connector = createTimedConnector({
    dns,
    blockPrivateTargets: opts.blockPrivateTargets,
    allowedAddresses: opts.allowedAddresses ?? [],
    ...(opts.localAddress !== undefined ? { localAddress: opts.localAddress } : {}),
    ...(opts.extraCaCerts?.length ? { ca: [...rootCertificates, ...opts.extraCaCerts] } : {}),
  });
  const agent = new Agent({ connect: connector.connect, keepAliveTimeout: opts.keepAliveTimeoutMs ?? 30_000 });
  const capture = capturePhases(connector);
  const hopContext: HopContext = { dispatcher: agent, connector, capture, maxBodyBytes: opts.maxBodyBytes ?? 1024 * 1024 };
  const watch = createSignalWatch();
  const targetUrl = createUrlCache();

  async function run(target: CheckTarget, signal?: AbortSignal): Promise<CheckOutcome> {
    const startedAt = performance.now();
    const deadline = startedAt + target.timeout_ms;
    const hops: Hop[] = [];
    const cell: RunCell = { reason: null, onAbort: null };
    const timer = setTimeout(abortCell, target.timeout_ms, cell, TIMED_OUT);
    const unwatch = signal === undefined ? null : watch(signal, cell);
    if (signal?.aborted) abortCell(cell, CANCELLED);

    try {
      let url = targetUrl(target.url);
      let method: CheckMethod = target.method;
      let auth = authorizationHeader(target, url);
      let body = target.body ?? null;
      let extraHeaders = target.headers;
      const capture = target.capture ?? CAPTURE_NOTHING;
      for (let redirects = 0; ; redirects++) {
        const headers: Record<string, string> = { 'user-agent': opts.userAgent, accept: '*/*' };
        if (auth !== null) headers['authorization'] = auth;
        if (extraHeaders) for (const h of extraHeaders) headers[h.name.toLowerCase()] = h.value;
        const hop = newHop();
        hops.push(hop);
        await sendHop(hopContext, url, method, headers, cell, deadline, hop, capture, body);
        if (!target.follow_redirects || !REDIRECTS.has(hop.status) || hop.location === null) break;
        if (redirects >= maxRedirects) {
          return outcome(hops, startedAt, { class: 'other', message: `Too many redirects (more than ${maxRedirects})` });
        }
        const next = parseUrl(hop.location, url);
        // Credentials stay with the origin they were given for, as browsers do.
        // The monitor's own headers may hold secrets too (API keys): they stay with that origin as well.
        if (next.origin !== url.origin) {
          auth = null;
          extraHeaders = undefined;
        }
        const nextMethod = redirectMethod(hop.status, method);
        if (nextMethod !== method) body = null;
        method = nextMethod;
        url = next;
        // undici lends an idle socket out again only after one event-loop turn of validation;
        // without this wait a same-origin redirect would open a second connection.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const status = hops.at(-1)?.status ?? 0;
      const done = outcome(
        hops,
        startedAt,
        target.valid_http_codes.includes(status) ? null : { class: 'status', message: `Unexpected status ${status}` },
      );
      if (url.protocol === 'https:') {
        const cert = connector.certificate(url.origin);
        if (cert !== null) done.certificate = cert;
      }
      return done;
    } catch (err) {
      return outcome(hops, startedAt, checkFailure(err, cell.reason, target.timeout_ms));
    } finally {
      clearTimeout(timer);
      unwatch?.();
    }
  }

  async function close(): Promise<void> {
    capture.close();
    connector.close();
    await agent.destroy();
  }

  return { run, close };
}
