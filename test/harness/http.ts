import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow target). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

interface Recorder {
  url: string;
  requests: RecordedRequest[];
  /** Resolves once `count` requests have arrived in total (no polling: resolved on arrival). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export interface Target extends Recorder {
  /** What the next requests get until changed again. */
  respond(answer: Answer): void;
  /**
   * Cuts the network between this server and clients connecting from `address` (a loopback
   * address such as 127.0.0.2, which a probe agent sends from with CHECK_SOURCE_ADDRESS): their
   * open connections are reset and new ones are dropped, until `heal`.
   */
  cut(address: string): void;
  heal(address: string): void;
}

interface Network {
  cut(address: string): void;
  heal(address: string): void;
}

function startRecorder(answerFor: (req: RecordedRequest) => Answer): Promise<{ recorder: Recorder; server: Server; network: Network }> {
  const requests: RecordedRequest[] = [];
  let waiters: { count: number; resolve: (r: RecordedRequest[]) => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(rec);
      waiters = waiters.filter((w) => (requests.length >= w.count ? (w.resolve([...requests]), false) : true));
      const answer = answerFor(rec);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(req.method === 'HEAD' ? undefined : (answer.body ?? ''));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 5_000;
  const cut = new Set<string>();
  const sockets = new Set<Socket>();
  const from = (socket: Socket) => (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  server.on('connection', (socket: Socket) => {
    if (cut.has(from(socket))) return void socket.destroy();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  return once(server, 'listening').then(() => {
    const { port } = server.address() as AddressInfo;
    return {
      server,
      recorder: {
        url: `http://127.0.0.1:${port}`,
        requests,
        waitForRequests(count, timeoutMs = 10_000) {
          if (requests.length >= count) return Promise.resolve([...requests]);
          return new Promise((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`expected ${count} requests, got ${requests.length} within ${timeoutMs} ms`)),
              timeoutMs,
            );
            waiters.push({
              count,
              resolve: (r) => {
                clearTimeout(timer);
                resolve(r);
              },
            });
          });
        },
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      },
      network: {
        cut(address: string) {
          cut.add(address);
          for (const socket of sockets) if (from(socket) === address) socket.destroy();
        },
        heal(address: string) {
          cut.delete(address);
        },
      },
    };
  });
}

/** A local HTTP server whose answer a test can change while it runs (a monitored site). */
export async function startTarget(initial: Answer = { status: 200, body: 'ok' }): Promise<Target> {
  let answer = initial;
  const { recorder, network } = await startRecorder(() => answer);
  return {
    ...recorder,
    ...network,
    respond(next) {
      answer = next;
    },
  };
}

/** A local webhook receiver that records every request (stands in for Slack, Discord, ...). */
export async function startWebhookSink(status = 200): Promise<Target> {
  return startTarget({ status, body: '{"ok":true}', headers: { 'content-type': 'application/json' } });
}
