import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket, { type ClientOptions, type RawData } from 'ws';
import { boundedMemo } from '../../../../shared/src/memo.ts';
import { armRun, createSignalWatch, TIMED_OUT, type RunCell } from '../abort.ts';
import type { CheckError } from '../classify.ts';
import { InvalidTargetError } from '../target-url.ts';
import { Connection, connectionFailure, expectedNotReceived, type Endpoint } from './connection.ts';
import type { ProbeContext, ProbeOutcome } from './probe.ts';

export type WebSocketTarget = {
  url: string;
  headers: Array<{ name: string; value: string }>;
  send: string | null;
  expect: string | null;
  timeout_ms: number;
};

const watch = createSignalWatch();

/** How long a check's closing handshake may take once its result is known. */
const CLOSE_TIMEOUT_MS = 1_000;

/** What the check saw of the server: the upgrade answer and the last message. */
type Seen = { status: number | null; readyAt: number; respondedAt: number; opened: boolean; lastMessage: string | undefined };

/** Where a ws:// or wss:// URL connects to, worked out once per URL (at most 1,000 kept). */
const endpointOf = boundedMemo(parseEndpoint);

function parseEndpoint(raw: string): Endpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidTargetError('Invalid URL');
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new InvalidTargetError(`Unsupported URL scheme ${url.protocol}`);
  const secure = url.protocol === 'wss:';
  return {
    host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    tls: secure,
  };
}

/** A message as text, cut at the size limit (a binary message is read as UTF-8 too). */
function messageText(data: RawData, limit: number): string {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  return bytes.subarray(0, limit).toString('utf8');
}

/**
 * The rule: ok once the server answers the upgrade with 101 and, when set, `send` went out as a
 * text message. With `expect`, ok once a message contains it (each message on its own, cut at
 * ctx.maxBodyBytes); messages that do not contain it are skipped while waiting goes on. When the
 * server closes or the time runs out before one does, the check fails with "Expected ... not
 * received" (class other: the upgrade worked, the server just did not say it), the last message in
 * observed.body. Any other answer to the upgrade is "Upgrade refused with status N".
 */
function exchange(ws: WebSocket, target: WebSocketTarget, ctx: ProbeContext, cell: RunCell, seen: Seen): Promise<CheckError | null> {
  const { send, expect } = target;
  return new Promise((resolve, reject) => {
    const responded = (status: number) => {
      seen.status = status;
      seen.respondedAt = performance.now();
    };
    ws.on('upgrade', (res: IncomingMessage) => responded(res.statusCode ?? 101));
    ws.on('unexpected-response', (_req: ClientRequest, res: IncomingMessage) => {
      responded(res.statusCode ?? 0);
      res.resume();
      resolve({ class: 'status', message: `Upgrade refused with status ${seen.status}` });
    });
    ws.on('open', () => {
      seen.opened = true;
      const sent = () => (expect === null ? resolve(null) : undefined);
      if (send === null) return sent();
      ws.send(send, (err) => (err ? reject(err) : sent()));
    });
    ws.on('message', (data: RawData) => {
      seen.lastMessage = messageText(data, ctx.maxBodyBytes);
      if (expect !== null && seen.lastMessage.includes(expect)) resolve(null);
    });
    ws.on('close', () =>
      resolve(
        expect !== null && seen.opened ? expectedNotReceived(expect) : { class: 'other', message: 'Connection closed by the server' },
      ),
    );
    ws.on('error', reject);
    cell.onAbort = () => {
      const waitingForExpect = seen.opened && expect !== null && cell.reason === TIMED_OUT;
      if (waitingForExpect) resolve(expectedNotReceived(expect));
      else reject(cell.reason);
    };
    if (cell.reason !== null) cell.onAbort();
  });
}

/** Upgrades to a WebSocket (ws:// or wss://), then sends and waits as the target says (see exchange). */
export async function checkWebSocket(target: WebSocketTarget, ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const { cell, release } = armRun(watch, target.timeout_ms, signal);
  const connection = new Connection();
  const seen: Seen = { status: null, readyAt: NaN, respondedAt: NaN, opened: false, lastMessage: undefined };
  let ws: WebSocket | null = null;
  let result: ProbeOutcome;

  const outcome = (error: CheckError | null): ProbeOutcome => {
    const timings = connection.timings(Number.isNaN(seen.respondedAt) ? 0 : seen.respondedAt - seen.readyAt, startedAt);
    const certificate = connection.certificate;
    // Built field by field: this runs for every check.
    const out: ProbeOutcome = { ok: error === null, status_code: seen.status, timings, error, observed: { response_time: timings.total } };
    if (seen.status !== null) out.observed.status_code = seen.status;
    if (seen.lastMessage !== undefined) out.observed.body = seen.lastMessage;
    if (certificate !== null) {
      out.observed.certificate_days = certificate.days_left;
      out.details = { certificate };
    }
    return out;
  };

  try {
    const endpoint = endpointOf(target.url);
    // http.request takes a createConnection that returns the socket or calls back with it (the
    // second form @types/ws does not describe). wss:// calls back once the certificate passed, so
    // the upgrade request never reaches a server whose certificate failed. ws:// returns the socket
    // at once: the request waits in it until connected, and it connects only to an address the
    // policy allows (a literal is judged before, a name's answers as they come).
    const createConnection = (_options: unknown, connected: (err: unknown, socket?: Socket) => void): Socket | undefined => {
      connection.start(endpoint, ctx, null, {
        connected(err) {
          if (err === null) seen.readyAt = performance.now();
          // A plain socket's own errors reach the request through the socket, as for ws's default.
          if (endpoint.tls) connected(err, connection.socket ?? undefined);
          else if (err !== null && connection.socket === null) connected(err);
        },
      });
      return endpoint.tls ? undefined : (connection.socket ?? undefined);
    };
    const headers: Record<string, string> = { 'user-agent': ctx.userAgent };
    for (const { name, value } of target.headers) headers[name] = value;
    ws = new WebSocket(target.url, {
      headers,
      perMessageDeflate: false,
      followRedirects: false,
      // A server must not make the agent hold a huge message: beyond this ws closes with 1009 and the check fails.
      maxPayload: ctx.maxBodyBytes * 4,
      // How long the closing handshake may take before ws destroys the socket (ws's own timer;
      // @types/ws does not describe the option yet).
      closeTimeout: CLOSE_TIMEOUT_MS,
      createConnection: createConnection as unknown as ClientOptions['createConnection'],
    } as ClientOptions);
    result = outcome(await exchange(ws, target, ctx, cell, seen));
  } catch (err) {
    result = outcome(connectionFailure(err, cell.reason, target.timeout_ms));
  } finally {
    release();
  }
  await closeDown(ws, connection);
  return result;
}

/**
 * Ends a check's connection before the check does, so that the agent's limit on checks in flight
 * also bounds its open sockets. A clean close when the WebSocket is open: the server answers the
 * close frame and the socket ends (terminating at once would destroy the socket under the frame
 * still being written, an error per check). A server that never answers it loses the socket
 * after CLOSE_TIMEOUT_MS (ws's close timer). The outcome was measured before: the closing
 * handshake is not in the response time.
 */
function closeDown(ws: WebSocket | null, connection: Connection): Promise<void> | undefined {
  if (ws?.readyState !== WebSocket.OPEN) {
    ws?.terminate();
    connection.close();
    return undefined;
  }
  return new Promise((resolve) => {
    ws.once('close', () => {
      connection.close();
      resolve();
    });
    ws.close(1000);
  });
}
