import { isIP, type LookupFunction, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildConnector, errors } from 'undici';
import { isBlockedAddress } from '../../../shared/src/net/address.ts';
import type { TLSSocket } from 'node:tls';
import type { CertificateInfo } from '../../../shared/src/contracts/checks.ts';
import { socketCertificate } from './certificate.ts';
import type { DnsCache } from './dns-cache.ts';

export class BlockedTargetError extends Error {
  readonly code = 'ERR_BLOCKED_TARGET';
  constructor(readonly address: string) {
    super(`Target address ${address} is not allowed`);
    this.name = 'BlockedTargetError';
  }
}

export type ConnectPhases = { dns: number; connect: number; tls: number };

export type TimedConnector = {
  connect: buildConnector.connector;
  /**
   * The setup phases of a socket this connector opened, handed out once: the first request on a
   * fresh socket gets them, later requests on the kept-alive socket get zeros. undefined for a
   * socket this connector does not know.
   */
  claim(socket: object): ConnectPhases | undefined;
  /**
   * A check announces it waits for a connection to origin until deadline (performance.now()
   * clock). A connection attempt outlives no check: it is destroyed once every check that could
   * use it has passed its deadline. Returns the release function.
   */
  expect(origin: string, deadline: number): () => void;
  /**
   * The certificate the origin presented on its latest TLS connection (read once per handshake,
   * so checks on a kept-alive connection see it too); null before any, or for plain http.
   */
  certificate(origin: string): CertificateInfo | null;
  close(): void;
};

export type TimedConnectorOptions = {
  dns: DnsCache;
  blockPrivateTargets: boolean;
  /** Exceptions to blockPrivateTargets, e.g. a private probe watching one internal service. */
  allowedAddresses?: readonly string[];
  ca?: string | Buffer | Array<string | Buffer>;
  /** Used when a connection starts with no check waiting for it (should not happen). */
  fallbackConnectTimeoutMs?: number;
  /** Local address connections leave from (CHECK_SOURCE_ADDRESS); the system's choice when unset. */
  localAddress?: string;
};

type SocketRecord = {
  startedAt: number;
  lookupAt: number | null;
  connectAt: number | null;
  secureAt: number | null;
  claimed: boolean;
};

const ZERO: ConnectPhases = { dns: 0, connect: 0, tls: 0 };

export function createTimedConnector(opts: TimedConnectorOptions): TimedConnector {
  const now = () => performance.now();
  const records = new WeakMap<object, SocketRecord>();
  const waiting = new Map<string, Set<{ deadline: number }>>();
  const connecting = new Set<Socket>();
  const fallbackMs = opts.fallbackConnectTimeoutMs ?? 30_000;
  const allowed = new Set(opts.allowedAddresses ?? []);
  const certificates = new Map<string, CertificateInfo>();
  const isRefused = (ip: string) => opts.blockPrivateTargets && !allowed.has(ip) && isBlockedAddress(ip);

  const lookup: LookupFunction = (hostname, options, callback) => {
    opts.dns.resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? found : found.filter((a) => a.family === family);
        const first = usable[0];
        if (first === undefined) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          return callback(Object.assign(err, { hostname }), '', 0);
        }
        // Refuse the name when any answer is internal: a mixed answer is how rebinding attacks look.
        const blocked = usable.find((a) => isRefused(a.address));
        if (blocked !== undefined) return callback(new BlockedTargetError(blocked.address), '', 0);
        if (options.all === true) return callback(null, usable);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

  // Session resumption is off so every fresh connection verifies the full chain and its TLS time
  // is a real handshake; undici's own connect timeout is off because deadlines come from checks.
  const base = buildConnector({
    lookup,
    maxCachedSessions: 0,
    timeout: 0,
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
  });

  function latestDeadline(origin: string): number {
    let latest = -Infinity;
    for (const w of waiting.get(origin) ?? []) latest = Math.max(latest, w.deadline);
    return latest;
  }

  function watchDeadline(socket: Socket, origin: string, secure: boolean, firstDeadline: number): void {
    let timer: NodeJS.Timeout | undefined;
    const arm = (deadline: number) => {
      timer = setTimeout(
        () => {
          const latest = latestDeadline(origin);
          if (latest > now()) return arm(latest);
          socket.destroy(new errors.ConnectTimeoutError(`Connect timeout (${origin})`));
        },
        Math.max(0, Math.ceil(deadline - now())),
      );
    };
    arm(firstDeadline);
    const done = () => {
      clearTimeout(timer);
      connecting.delete(socket);
    };
    socket.once(secure ? 'secureConnect' : 'connect', done);
    socket.once('close', done);
  }

  const connect: buildConnector.connector = (options, callback) => {
    const { hostname, protocol } = options;
    if (isIP(hostname) !== 0 && isRefused(hostname)) {
      callback(new BlockedTargetError(hostname), null);
      return;
    }
    const origin = `${protocol}//${options.host ?? hostname}`;
    const record: SocketRecord = { startedAt: now(), lookupAt: null, connectAt: null, secureAt: null, claimed: false };
    // buildConnector's connector returns the socket although its type says void
    const socket = (base as unknown as (o: typeof options, cb: typeof callback) => Socket)(
      opts.localAddress === undefined ? options : { ...options, localAddress: opts.localAddress },
      callback,
    );
    records.set(socket, record);
    connecting.add(socket);
    // Prepended: undici hands the socket to a request from its own connect listener, and the
    // phases must be known by then.
    socket.prependOnceListener('lookup', () => (record.lookupAt = now()));
    socket.prependOnceListener('connect', () => (record.connectAt = now()));
    socket.prependOnceListener('secureConnect', () => {
      record.secureAt = now();
      const cert = socketCertificate(socket as TLSSocket);
      if (cert === null) return;
      if (certificates.size >= 10_000) certificates.clear();
      certificates.set(origin, cert);
    });
    const latest = latestDeadline(origin);
    watchDeadline(socket, origin, protocol === 'https:', latest > -Infinity ? latest : now() + fallbackMs);
  };

  function claim(socket: object): ConnectPhases | undefined {
    const r = records.get(socket);
    if (r === undefined) return undefined;
    if (r.claimed || r.connectAt === null) return ZERO;
    r.claimed = true;
    const connectStart = r.lookupAt ?? r.startedAt;
    return {
      dns: r.lookupAt === null ? 0 : r.lookupAt - r.startedAt,
      connect: r.connectAt - connectStart,
      tls: r.secureAt === null ? 0 : r.secureAt - r.connectAt,
    };
  }

  function expect(origin: string, deadline: number): () => void {
    const entry = { deadline };
    let set = waiting.get(origin);
    if (set === undefined) waiting.set(origin, (set = new Set()));
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && waiting.get(origin) === set) waiting.delete(origin);
    };
  }

  function certificate(origin: string): CertificateInfo | null {
    const cert = certificates.get(origin);
    if (cert === undefined) return null;
    // Days left as of now, not as of the handshake: a connection may be kept for a while.
    return { ...cert, days_left: Math.round(((Date.parse(cert.valid_to) - Date.now()) / 86_400_000) * 1000) / 1000 };
  }

  function close(): void {
    for (const socket of connecting) socket.destroy();
    connecting.clear();
    certificates.clear();
  }

  return { connect, claim, expect, certificate, close };
}
