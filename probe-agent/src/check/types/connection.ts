import { connect as netConnect, isIP, type Socket, type TcpNetConnectOpts as TcpConnectOpts } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, rootCertificates, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { CertificateInfo } from '../../../../shared/src/contracts/checks.ts';
import { BlockedAddressError, guardedLookup, refuses } from '../../../../shared/src/net/lookup.ts';
import { certificateFailure, socketCertificate } from '../certificate.ts';
import { checkFailure, type CheckError } from '../classify.ts';
import type { RunCell } from '../abort.ts';
import type { CheckTimings } from '../timings.ts';
import type { ProbeContext } from './probe.ts';

/** Where a check that opens its own socket (TCP, WebSocket) connects to. */
export type Endpoint = { readonly host: string; readonly port: number; readonly tls: boolean };

/** A failure the connection decided itself (a certificate it does not accept), already worded for users. */
export class ConnectionFailure extends Error {
  constructor(readonly failure: CheckError) {
    super(failure.message);
    this.name = 'ConnectionFailure';
  }
}

const ignore = () => {};
const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

// One lookup function per agent context, not one per check.
const lookups = new WeakMap<ProbeContext, ReturnType<typeof guardedLookup>>();
function lookupOf(ctx: ProbeContext): ReturnType<typeof guardedLookup> {
  let lookup = lookups.get(ctx);
  if (lookup === undefined) {
    lookup = guardedLookup(ctx.policy, ctx.resolve);
    lookups.set(ctx, lookup);
  }
  return lookup;
}

/** Told once when a connection is ready (`null`) or failed (why). */
export interface ConnectionListener {
  connected(err: unknown): void;
}

const kConnection = Symbol('connection');
type OwnedSocket = Socket & { [kConnection]?: Connection };

// The socket's listeners are shared by every connection and find theirs on the socket: a check
// allocates no listener closures (a TCP check is little more than its connect and close).
function onSocketError(this: OwnedSocket, err: Error): void {
  this[kConnection]?.settle(err);
}
function onSocketClose(this: OwnedSocket): void {
  // Only while connecting: the close every check ends with must not build an error nobody reads.
  const connection = this[kConnection];
  if (connection?.connecting) connection.settle(new Error('Connection closed by the server'));
}
function onSocketReady(this: OwnedSocket): void {
  const connection = this[kConnection];
  if (connection?.connecting) connection.ready();
}
function onSocketConnect(this: OwnedSocket): void {
  const connection = this[kConnection];
  if (connection !== undefined) connection.connectAt = performance.now();
}
function onSocketLookup(this: OwnedSocket): void {
  const connection = this[kConnection];
  if (connection !== undefined) connection.lookupAt = performance.now();
}

/**
 * One connection a check opens itself, and what its setup measured and saw.
 *
 * Node's own certificate verification is off (rejectUnauthorized: false) and done here instead,
 * on the completed handshake: that way a failing certificate is still reported with its dates,
 * and the socket is handed out only once verified, so nothing a monitor sends (a payload,
 * upgrade headers) ever reaches a server whose certificate failed.
 */
export class Connection {
  socket: Socket | null = null;
  certificate: CertificateInfo | null = null;
  /** @internal set by the socket's listeners */
  lookupAt: number | null = null;
  /** @internal set by the socket's listeners */
  connectAt: number | null = null;
  private startedAt = NaN;
  private secureAt: number | null = null;
  private tls = false;
  private host = '';
  private cell: RunCell | null = null;
  private listener: ConnectionListener | null = null;

  /**
   * Connects (and verifies the certificate), then tells `listener` once: `null` with `socket`
   * ready for the check's bytes, or why not. With the check's abort cell, fails with the cell's
   * reason once the check times out or is cancelled first.
   */
  start(endpoint: Endpoint, ctx: ProbeContext, cell: RunCell | null, listener: ConnectionListener): void {
    this.startedAt = performance.now();
    const { host, port } = endpoint;
    const literal = isIP(host) !== 0;
    this.listener = listener;
    // A name goes through guardedLookup, which applies the policy to every address it answers;
    // a literal address is never looked up, so it is checked here.
    if (literal && refuses(ctx.policy, host)) return this.settle(new BlockedAddressError(host));
    // Built field by field: this runs for every check.
    const options: TcpConnectOpts & ConnectionOptions = { host, port };
    if (!literal) options.lookup = lookupOf(ctx);
    if (ctx.localAddress !== undefined) options.localAddress = ctx.localAddress;
    this.tls = endpoint.tls;
    this.host = host;
    if (endpoint.tls) {
      if (!literal) options.servername = host;
      if (ctx.extraCaCerts?.length) options.ca = [...rootCertificates, ...ctx.extraCaCerts];
      options.rejectUnauthorized = false;
    }
    const socket: OwnedSocket = endpoint.tls ? tlsConnect(options) : netConnect(options);
    this.socket = socket;
    socket[kConnection] = this;
    if (!literal) socket.once('lookup', onSocketLookup);
    // The listeners stay on once the socket is ready or failed, with nothing left to tell: a later
    // error of the socket (a write to a server gone) is the check's to notice, never an uncaught one.
    socket.on('error', onSocketError);
    socket.on('close', onSocketClose);
    socket.on(endpoint.tls ? 'secureConnect' : 'connect', onSocketReady);
    if (endpoint.tls) socket.once('connect', onSocketConnect);
    if (cell !== null) {
      this.cell = cell;
      cell.onAbort = () => this.settle(cell.reason);
      if (cell.reason !== null) cell.onAbort();
    }
  }

  /** `start` as a promise of the ready socket. */
  open(endpoint: Endpoint, ctx: ProbeContext, cell?: RunCell): Promise<Socket> {
    return new Promise((resolve, reject) =>
      this.start(endpoint, ctx, cell ?? null, { connected: (err) => (err === null ? resolve(this.socket!) : reject(err)) }),
    );
  }

  /** @internal the socket connected (and, over TLS, completed its handshake). */
  ready(): void {
    if (!this.tls) {
      this.connectAt = performance.now();
      return this.settle(null);
    }
    this.secureAt = performance.now();
    const socket = this.socket as TLSSocket;
    const failure = this.verify(socket, this.host);
    if (failure === null) return this.settle(null);
    this.settle(new ConnectionFailure(failure));
    socket.destroy();
  }

  /** Whether the listener is still to be told. */
  get connecting(): boolean {
    return this.listener !== null;
  }

  /** @internal tells the listener, once. */
  settle(err: unknown): void {
    const listener = this.listener;
    if (listener === null) return;
    this.listener = null;
    if (this.cell !== null) this.cell.onAbort = null;
    listener.connected(err);
  }

  /** Reads the certificate and judges the handshake Node completed without rejecting anything. */
  private verify(socket: TLSSocket, host: string): CheckError | null {
    this.certificate = socketCertificate(socket);
    if (socket.authorized) return null;
    // Node types it as an Error, but hands over the code (CERT_HAS_EXPIRED...) as a string.
    const reason: unknown = socket.authorizationError;
    const code =
      typeof reason === 'string' ? reason : reason instanceof Error ? ((reason as NodeJS.ErrnoException).code ?? reason.message) : '';
    return (
      certificateFailure(code, host, this.certificate) ?? { class: 'tls', message: `TLS error: ${code || 'certificate not accepted'}` }
    );
  }

  /** dns, connect, tls as far as the setup got, and the first byte and total from the caller. */
  timings(ttfb: number, checkStartedAt: number): CheckTimings {
    const connectFrom = this.lookupAt ?? this.startedAt;
    return {
      dns: this.lookupAt === null ? 0 : round3(this.lookupAt - this.startedAt),
      connect: this.connectAt === null ? 0 : round3(this.connectAt - connectFrom),
      tls: this.secureAt === null || this.connectAt === null ? 0 : round3(this.secureAt - this.connectAt),
      ttfb: round3(ttfb),
      total: round3(performance.now() - checkStartedAt),
    };
  }

  /** Closes the socket at once (a check has nothing more to say; a FIN goes out as the descriptor closes). */
  close(): void {
    const socket = this.socket;
    if (socket === null) return;
    this.socket = null;
    this.listener = null;
    socket.destroy();
    socket.removeAllListeners();
    socket.on('error', ignore);
  }
}

/** Why a check's connection failed, worded for users: its own limits first, then the cause. */
export function connectionFailure(err: unknown, reason: symbol | null, timeoutMs: number): CheckError {
  if (reason !== null) return checkFailure(err, reason, timeoutMs);
  if (err instanceof ConnectionFailure) return err.failure;
  if (err instanceof BlockedAddressError) return { class: 'other', message: `Target address ${err.address} is not allowed` };
  return checkFailure(err, null, timeoutMs);
}

/** "Expected ..." for a reply that never contained the text a monitor waits for. */
export function expectedNotReceived(expect: string): CheckError {
  return { class: 'other', message: `Expected "${expect.slice(0, 50)}" not received` };
}
