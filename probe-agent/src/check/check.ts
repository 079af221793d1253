import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { classifyError, type CheckError } from './classify.ts';
import { createTimedConnector, type ConnectPhases } from './connector.ts';
import { createDnsCache, type Resolve } from './dns-cache.ts';

export type { CheckError, CheckErrorClass } from './classify.ts';

export type CheckMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export type CheckTarget = {
  url: string;
  method: CheckMethod;
  valid_http_codes: number[];
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  timeout_ms: number;
  follow_redirects: boolean;
};

/** Milliseconds, 3 decimals; 0 for a phase that did not happen (e.g. a reused connection). */
export type CheckTimings = { dns: number; connect: number; tls: number; ttfb: number; total: number };

export type CheckOutcome = {
  ok: boolean;
  status_code: number | null;
  timings: CheckTimings;
  error: CheckError | null;
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
};

export type Checker = {
  run(target: CheckTarget, signal?: AbortSignal): Promise<CheckOutcome>;
  close(): Promise<void>;
};

type Hop = {
  phases: ConnectPhases;
  startedAt: number;
  headersAt: number;
  status: number;
  location: string | null;
};

const TIMED_OUT = Symbol('timed out');
const CANCELLED = Symbol('cancelled');
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ZERO_PHASES: ConnectPhases = { dns: 0, connect: 0, tls: 0 };
const SEND_HEADERS = 'undici:client:sendHeaders';

class InvalidTargetError extends Error {}

/** The abort state of one check: why it ended early, and how to stop its hop in flight. */
type RunCell = { reason: symbol | null; onAbort: (() => void) | null };

function abortCell(cell: RunCell, reason: symbol): void {
  if (cell.reason !== null) return;
  cell.reason = reason;
  cell.onAbort?.();
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

export function createChecker(opts: CheckerOptions): Checker {
  const now = () => performance.now();
  const maxRedirects = opts.maxRedirects ?? 5;
  const maxBodyBytes = opts.maxBodyBytes ?? 1024 * 1024;
  const dns = createDnsCache({
    ttlMs: opts.dnsCacheTtlMs ?? 60_000,
    maxEntries: 10_000,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  });
  const connector = createTimedConnector({
    dns,
    blockPrivateTargets: opts.blockPrivateTargets,
    allowedAddresses: opts.allowedAddresses ?? [],
    ...(opts.extraCaCerts?.length ? { ca: [...rootCertificates, ...opts.extraCaCerts] } : {}),
  });
  const agent = new Agent({ connect: connector.connect, keepAliveTimeout: opts.keepAliveTimeoutMs ?? 30_000 });

  // undici calls a handler's onRequestStart and then publishes sendHeaders with the socket in one
  // synchronous step, so the hop that started last is the one writing on that socket.
  let startingHop: Hop | null = null;
  const onSendHeaders = (message: unknown) => {
    const hop = startingHop;
    if (hop === null) return;
    const phases = connector.claim((message as { socket: object }).socket);
    if (phases === undefined) return;
    startingHop = null;
    hop.phases = phases;
  };
  subscribe(SEND_HEADERS, onSendHeaders);

  /** One request of a check (the first, or a redirect hop): a dispatch handler that settles a promise. */
  class HopRequest implements Dispatcher.DispatchHandler {
    private controller: Dispatcher.DispatchController | null = null;
    private settled = false;
    private received = 0;
    private readonly release: () => void;

    constructor(
      private readonly hop: Hop,
      private readonly cell: RunCell,
      origin: string,
      deadline: number,
      private readonly resolve: () => void,
      private readonly reject: (err: unknown) => void,
    ) {
      this.release = connector.expect(origin, deadline);
      cell.onAbort = this.abort;
    }

    readonly abort = (): void => {
      this.controller?.abort(new Error('check aborted'));
      this.settle(this.cell.reason);
    };

    settle(err: unknown): void {
      if (this.settled) return;
      this.settled = true;
      this.release();
      this.cell.onAbort = null;
      if (err === null) this.resolve();
      else this.reject(err);
    }

    onRequestStart(c: Dispatcher.DispatchController): void {
      // A request that waited in the pool past its check's end must not run any more.
      if (this.settled) return c.abort(new Error('check already finished'));
      this.controller = c;
      this.hop.startedAt = now();
      startingHop = this.hop;
    }

    onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
      if (statusCode < 200) return;
      this.hop.headersAt = now();
      this.hop.status = statusCode;
      const location = headers['location'];
      this.hop.location = typeof location === 'string' ? location : null;
    }

    onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
      this.received += chunk.length;
      if (this.received > maxBodyBytes) {
        this.settle(null);
        c.abort(new Error('response body limit reached'));
      }
    }

    onResponseEnd(): void {
      this.settle(null);
    }

    onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
      this.settle(err);
    }
  }

  function sendHop(
    url: URL,
    method: CheckMethod,
    headers: Record<string, string>,
    cell: RunCell,
    deadline: number,
    hop: Hop,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      if (cell.reason !== null) return reject(cell.reason);
      const handler = new HopRequest(hop, cell, url.origin, deadline, resolve, reject);
      try {
        agent.dispatch({ origin: url.origin, path: url.pathname + url.search, method, headers }, handler);
      } catch (err) {
        handler.settle(err);
      }
    });
  }

  // One listener per caller signal (the agent passes one signal to every check), not one per check:
  // adding and removing an event listener per check costs more than the rest of a keep-alive check.
  const cellsBySignal = new WeakMap<AbortSignal, Set<RunCell>>();
  function watch(signal: AbortSignal, cell: RunCell): () => void {
    let cells = cellsBySignal.get(signal);
    if (cells === undefined) {
      const created = new Set<RunCell>();
      cells = created;
      cellsBySignal.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          for (const c of created) abortCell(c, CANCELLED);
          created.clear();
        },
        { once: true },
      );
    }
    cells.add(cell);
    return () => cells.delete(cell);
  }

  // Parsed once per distinct URL: monitors are checked again and again with the same target.
  const urls = new Map<string, URL>();
  function targetUrl(raw: string): URL {
    let url = urls.get(raw);
    if (url === undefined) {
      url = parseUrl(raw);
      if (urls.size >= 10_000) urls.clear();
      urls.set(raw, url);
    }
    return url;
  }

  async function run(target: CheckTarget, signal?: AbortSignal): Promise<CheckOutcome> {
    const startedAt = now();
    const deadline = startedAt + target.timeout_ms;
    const hops: Hop[] = [];
    const cell: RunCell = { reason: null, onAbort: null };
    const timer = setTimeout(abortCell, target.timeout_ms, cell, TIMED_OUT);
    const unwatch = signal === undefined ? null : watch(signal, cell);
    if (signal?.aborted) abortCell(cell, CANCELLED);

    const finish = (error: CheckError | null): CheckOutcome => {
      const last = hops.findLast((h) => h.status !== 0);
      const t = { dns: 0, connect: 0, tls: 0, ttfb: 0 };
      for (const h of hops) {
        t.dns += h.phases.dns;
        t.connect += h.phases.connect;
        t.tls += h.phases.tls;
        if (!Number.isNaN(h.headersAt)) t.ttfb += h.headersAt - h.startedAt;
      }
      return {
        ok: error === null,
        status_code: last?.status ?? null,
        timings: {
          dns: round3(t.dns),
          connect: round3(t.connect),
          tls: round3(t.tls),
          ttfb: round3(t.ttfb),
          total: round3(now() - startedAt),
        },
        error,
      };
    };

    try {
      let url = targetUrl(target.url);
      let method = target.method;
      let auth = authorizationHeader(target, url);
      for (let redirects = 0; ; redirects++) {
        const headers: Record<string, string> = { 'user-agent': opts.userAgent, accept: '*/*' };
        if (auth !== null) headers['authorization'] = auth;
        const hop: Hop = { phases: ZERO_PHASES, startedAt: NaN, headersAt: NaN, status: 0, location: null };
        hops.push(hop);
        await sendHop(url, method, headers, cell, deadline, hop);
        if (!target.follow_redirects || !REDIRECTS.has(hop.status) || hop.location === null) break;
        if (redirects >= maxRedirects) {
          return finish({ class: 'other', message: `Too many redirects (more than ${maxRedirects})` });
        }
        const next = parseUrl(hop.location, url);
        // Credentials stay with the origin they were given for, as browsers do.
        if (next.origin !== url.origin) auth = null;
        if ((hop.status === 303 && method !== 'HEAD') || ((hop.status === 301 || hop.status === 302) && method === 'POST')) {
          method = 'GET';
        }
        url = next;
        // undici lends an idle socket out again only after one event-loop turn of validation;
        // without this wait a same-origin redirect would open a second connection.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const status = hops.at(-1)?.status ?? 0;
      if (target.valid_http_codes.includes(status)) return finish(null);
      return finish({ class: 'status', message: `Unexpected status ${status}` });
    } catch (err) {
      if (cell.reason === TIMED_OUT) return finish({ class: 'timeout', message: `Timed out after ${target.timeout_ms} ms` });
      if (cell.reason === CANCELLED) return finish({ class: 'other', message: 'Check cancelled' });
      if (err instanceof InvalidTargetError) return finish({ class: 'other', message: err.message });
      return finish(classifyError(err, target.timeout_ms));
    } finally {
      clearTimeout(timer);
      unwatch?.();
    }
  }

  async function close(): Promise<void> {
    unsubscribe(SEND_HEADERS, onSendHeaders);
    connector.close();
    await agent.destroy();
  }

  return { run, close };
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new InvalidTargetError(base ? `Invalid redirect location ${raw.slice(0, 100)}` : 'Invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidTargetError(`Unsupported URL scheme ${url.protocol}`);
  }
  return url;
}

/** Explicit fields win over credentials written into the URL. */
function authorizationHeader(target: CheckTarget, url: URL): string | null {
  const user = target.basic_auth_username ?? (url.username ? decodeURIComponent(url.username) : null);
  if (user === null) return null;
  const password = target.basic_auth_username !== null ? (target.basic_auth_password ?? '') : decodeURIComponent(url.password);
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
