import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { abortCell, CANCELLED, createSignalWatch, TIMED_OUT, type RunCell } from '../abort.ts';
import type { CheckError } from '../classify.ts';
import { Connection, connectionFailure, expectedNotReceived, type ConnectionListener } from './connection.ts';
import type { ProbeContext, ProbeOutcome } from './probe.ts';

/**
 * A TCP monitor: connect (over TLS when `tls`), write `send`, wait for `expect`.
 *
 * `send` is written as UTF-8 exactly as stored: a "\n" in the monitor's JSON string is a real
 * newline byte (most line protocols want "\r\n", written "\r\n" in JSON).
 */
export type TcpTarget = { host: string; port: number; tls: boolean; send: string | null; expect: string | null; timeout_ms: number };

const watch = createSignalWatch();
const kCheck = Symbol('tcp check');
type CheckedSocket = Socket & { [kCheck]?: TcpCheck };

// Shared by every check, which they find on the socket (see Connection): a check allocates one
// promise and no listener closures.
function onData(this: CheckedSocket, chunk: Buffer): void {
  this[kCheck]?.received(chunk);
}
function onGone(this: CheckedSocket): void {
  this[kCheck]?.gone();
}
function onError(this: CheckedSocket, err: Error): void {
  this[kCheck]?.failed(err);
}

/** One check from connect to verdict: a RunCell (its abort state) and the connection's listener. */
class TcpCheck implements RunCell, ConnectionListener {
  reason: symbol | null = null;
  onAbort: (() => void) | null = null;
  private readonly startedAt = performance.now();
  private readonly connection = new Connection();
  private readonly timer: NodeJS.Timeout;
  private readonly unwatch: (() => void) | null;
  private readyAt = NaN;
  private firstByteAt: number | null = null;
  private text = '';
  private bytes = 0;
  private decoder: StringDecoder | null = null;
  /** Where `expect` is looked for next: only the tail that could start a match is searched again. */
  private searchFrom = 0;
  /** Waiting for `expect` (the connection is ready and `send` written). */
  private awaiting = false;
  private done = false;

  constructor(
    private readonly target: TcpTarget,
    private readonly ctx: ProbeContext,
    signal: AbortSignal | undefined,
    private readonly resolve: (outcome: ProbeOutcome) => void,
  ) {
    this.timer = setTimeout(abortCell, target.timeout_ms, this, TIMED_OUT);
    this.unwatch = signal === undefined ? null : watch(signal, this);
    if (signal?.aborted) abortCell(this, CANCELLED);
    this.connection.start(target, ctx, this, this);
  }

  connected(err: unknown): void {
    if (err !== null) return this.failed(err);
    const socket: CheckedSocket = this.connection.socket!;
    this.readyAt = performance.now();
    socket[kCheck] = this;
    socket.on('data', onData);
    const { send, expect } = this.target;
    if (expect === null) {
      // Passing means the bytes went out: wait for the write to complete.
      if (send === null) return this.finish(null);
      this.onAbort = () => this.failed(this.reason);
      socket.write(send, 'utf8', (writeErr) => (writeErr ? this.failed(writeErr) : this.finish(null)));
      return;
    }
    // The reply is what is awaited; a failed write reaches the check as the socket's error.
    if (send !== null) socket.write(send, 'utf8');
    this.awaiting = true;
    socket.once('end', onGone);
    socket.once('close', onGone);
    socket.on('error', onError);
    // Running out of time here is not a timeout failure: the server answered, just not what the
    // monitor waits for. A cancelled check fails as cancelled.
    this.onAbort = () => (this.reason === TIMED_OUT ? this.finish(expectedNotReceived(expect)) : this.failed(this.reason));
    this.look();
  }

  /** What the server sent, as text, up to the size limit. */
  received(chunk: Buffer): void {
    this.firstByteAt ??= performance.now();
    const room = this.ctx.maxBodyBytes - this.bytes;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(0, room));
    this.bytes += part.length;
    // Most replies come whole: a chunk that ends on an ASCII byte ends no character halfway and is
    // read as it is. A decoder (which carries a character's first bytes over to the next chunk) is
    // made for the first chunk that does not, and kept.
    if (this.decoder === null && (part.length === 0 || part[part.length - 1]! < 0x80)) this.text += part.toString('utf8');
    else this.text += (this.decoder ??= new StringDecoder('utf8')).write(part);
    if (this.awaiting) this.look();
  }

  /**
   * Passes once the received text contains `expect`; fails with "Expected ... not received" once
   * it no longer can: ctx.maxBodyBytes were read (here), the server closed (gone) or the time ran
   * out (onAbort).
   */
  private look(): void {
    const expect = this.target.expect!;
    if (this.text.indexOf(expect, this.searchFrom) !== -1) return this.finish(null);
    this.searchFrom = Math.max(0, this.text.length - expect.length + 1);
    if (this.bytes >= this.ctx.maxBodyBytes) this.finish(expectedNotReceived(expect));
  }

  gone(): void {
    if (this.awaiting) this.finish(expectedNotReceived(this.target.expect!));
  }

  /** Failed with `err`: the check's own limits first (timed out, cancelled), then the cause. */
  failed(err: unknown): void {
    this.finish(connectionFailure(err, this.reason, this.target.timeout_ms));
  }

  finish(error: CheckError | null): void {
    if (this.done) return;
    this.done = true;
    this.awaiting = false;
    this.onAbort = null;
    clearTimeout(this.timer);
    this.unwatch?.();
    const { connection } = this;
    const timings = connection.timings(this.firstByteAt === null ? 0 : this.firstByteAt - this.readyAt, this.startedAt);
    const certificate = connection.certificate;
    connection.close();
    // Built field by field: this runs for every check.
    const outcome: ProbeOutcome = { ok: error === null, status_code: null, timings, error, observed: { response_time: timings.total } };
    if (this.text !== '') outcome.observed.body = this.text;
    if (certificate !== null) {
      outcome.observed.certificate_days = certificate.days_left;
      outcome.details = { certificate };
    }
    this.resolve(outcome);
  }
}

/**
 * Passes once connected (and the TLS handshake verified) and `send` written when there is no
 * `expect`; observed.body is then whatever had arrived by that time. With `expect`, passes once the
 * received text contains it, and fails with "Expected ... not received" (what came in body) when
 * the server closes, ctx.maxBodyBytes are read or the time runs out first.
 */
export function checkTcp(target: TcpTarget, ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeOutcome> {
  return new Promise((resolve) => new TcpCheck(target, ctx, signal, resolve));
}
