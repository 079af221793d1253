import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { RunCell } from './abort.ts';
import type { TimedConnector } from './connector.ts';
import type { Hop, PhaseCapture } from './timings.ts';

/** What every hop of a checker shares: made once per checker, not per check. */
export type HopContext = {
  dispatcher: Dispatcher;
  connector: Pick<TimedConnector, 'expect'>;
  capture: PhaseCapture;
  /** Response bytes read before the body is dropped; the connection is then not reused. */
  maxBodyBytes: number;
};

/** What a hop keeps of its response for the check's assertions; nothing by default (the common, cheapest case). */
export type HopCapture = { headers: boolean; body: boolean };
export const CAPTURE_NOTHING: HopCapture = { headers: false, body: false };

/** A request body and the headers that describe it. */
export type HopBody = string | null;

/**
 * One request of a check (the first, or a redirect hop): a dispatch handler that settles a
 * promise. One object takes every undici callback of the hop: a closure per callback costs more.
 */
class HopRequest implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private received = 0;
  private readonly release: () => void;

  constructor(
    private readonly ctx: HopContext,
    private readonly hop: Hop,
    private readonly cell: RunCell,
    private readonly capture: HopCapture,
    origin: string,
    deadline: number,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.release = ctx.connector.expect(origin, deadline);
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
    this.hop.startedAt = performance.now();
    this.ctx.capture.starting = this.hop;
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    this.hop.headersAt = performance.now();
    this.hop.status = statusCode;
    const location = headers['location'];
    this.hop.location = typeof location === 'string' ? location : null;
    if (this.capture.headers) {
      const kept: Record<string, string> = {};
      for (const name in headers) {
        const value = headers[name];
        if (value !== undefined) kept[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      this.hop.headers = kept;
    }
    if (this.capture.body) this.hop.body = [];
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    const before = this.received;
    this.received += chunk.length;
    if (this.hop.body !== null && before < this.ctx.maxBodyBytes) {
      this.hop.body.push(this.received > this.ctx.maxBodyBytes ? chunk.subarray(0, this.ctx.maxBodyBytes - before) : chunk);
    }
    if (this.received > this.ctx.maxBodyBytes) {
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

/** Sends one hop and resolves once its response was read; rejects with the cell's reason when aborted. */
export function sendHop(
  ctx: HopContext,
  url: URL,
  method: Dispatcher.HttpMethod,
  headers: Record<string, string>,
  cell: RunCell,
  deadline: number,
  hop: Hop,
  capture: HopCapture = CAPTURE_NOTHING,
  body: HopBody = null,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (cell.reason !== null) return reject(cell.reason);
    const handler = new HopRequest(ctx, hop, cell, capture, url.origin, deadline, resolve, reject);
    try {
      ctx.dispatcher.dispatch(
        { origin: url.origin, path: url.pathname + url.search, method, headers, ...(body !== null ? { body } : {}) },
        handler,
      );
    } catch (err) {
      handler.settle(err);
    }
  });
}
