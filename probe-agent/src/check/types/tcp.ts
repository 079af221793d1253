import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { armRun, createSignalWatch, TIMED_OUT, type RunCell } from '../abort.ts';
import type { CheckError } from '../classify.ts';
import { Connection, connectionFailure, expectedNotReceived } from './connection.ts';
import type { ProbeContext, ProbeOutcome } from './probe.ts';

/**
 * A TCP monitor: connect (over TLS when `tls`), write `send`, wait for `expect`.
 *
 * `send` is written as UTF-8 exactly as stored: a "\n" in the monitor's JSON string is a real
 * newline byte (most line protocols want "\r\n", written "\r\n" in JSON).
 */
export type TcpTarget = { host: string; port: number; tls: boolean; send: string | null; expect: string | null; timeout_ms: number };

const watch = createSignalWatch();

/** What the server sent, as text, up to the size limit. */
class Received {
  text = '';
  firstByteAt: number | null = null;
  private bytes = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.bytes >= this.limit;
  }

  add(chunk: Buffer): void {
    this.firstByteAt ??= performance.now();
    const part = chunk.subarray(0, Math.max(0, this.limit - this.bytes));
    this.bytes += part.length;
    this.text += this.decoder.write(part);
  }
}

/** `work`, or a rejection with the cell's reason once the check times out or is cancelled. */
function untilAborted<T>(cell: RunCell, work: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    work.then(resolve, reject);
    cell.onAbort = () => reject(cell.reason);
    if (cell.reason !== null) cell.onAbort();
  });
}

function write(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve, reject) => socket.write(text, 'utf8', (err) => (err ? reject(err) : resolve())));
}

/**
 * Whether the reply came to contain `expect` before it could no longer: the server closed, the
 * size limit was read, or the check's time ran out. Running out of time here is not a timeout
 * failure: the server answered, just not what the monitor waits for. A cancelled check or a
 * broken connection rejects.
 */
function awaitExpected(socket: Socket, received: Received, expect: string, cell: RunCell): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let searchFrom = 0;
    const look = () => {
      if (received.text.indexOf(expect, searchFrom) !== -1) return resolve(true);
      // Only the tail that could start a match needs searching again.
      searchFrom = Math.max(0, received.text.length - expect.length + 1);
      if (received.full) resolve(false);
    };
    socket.on('data', look);
    socket.once('end', () => resolve(false));
    socket.once('close', () => resolve(false));
    socket.once('error', reject);
    cell.onAbort = () => (cell.reason === TIMED_OUT ? resolve(false) : reject(cell.reason));
    if (cell.reason !== null) cell.onAbort();
    look();
  });
}

/**
 * Passes once connected (and the TLS handshake verified) and `send` written when there is no
 * `expect`; observed.body is then whatever had arrived by that time. With `expect`, passes once the
 * received text contains it, and fails with "Expected ... not received" (what came in body) when
 * the server closes, ctx.maxBodyBytes are read or the time runs out first.
 */
export async function checkTcp(target: TcpTarget, ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const { cell, release } = armRun(watch, target.timeout_ms, signal);
  const connection = new Connection();
  const received = new Received(ctx.maxBodyBytes);
  let readyAt = NaN;

  const outcome = (error: CheckError | null): ProbeOutcome => {
    const timings = connection.timings(received.firstByteAt === null ? 0 : received.firstByteAt - readyAt, startedAt);
    const certificate = connection.certificate;
    return {
      ok: error === null,
      status_code: null,
      timings,
      error,
      observed: {
        response_time: timings.total,
        ...(received.text !== '' ? { body: received.text } : {}),
        ...(certificate !== null ? { certificate_days: certificate.days_left } : {}),
      },
      ...(certificate !== null ? { details: { certificate } } : {}),
    };
  };

  try {
    const endpoint = { host: target.host, port: target.port, tls: target.tls };
    const socket = await connection.open(endpoint, ctx, cell);
    readyAt = performance.now();
    socket.on('data', (chunk: Buffer) => received.add(chunk));
    if (target.expect === null) {
      // Passing means the bytes went out: wait for the write to complete.
      if (target.send !== null) await untilAborted(cell, write(socket, target.send));
      return outcome(null);
    }
    // The reply is what is awaited; a failed write reaches awaitExpected as the socket's error.
    if (target.send !== null) socket.write(target.send, 'utf8');
    const found = await awaitExpected(socket, received, target.expect, cell);
    return outcome(found ? null : expectedNotReceived(target.expect));
  } catch (err) {
    return outcome(connectionFailure(err, cell.reason, target.timeout_ms));
  } finally {
    release();
    connection.close();
  }
}
