/**
 * The third party of the alerts part, in a process of its own: a webhook receiver on 127.0.0.1
 * that answers 200 at once and records, for every request, when it had read the whole body, the
 * delivery id (X-Uptime-Delivery), the event id and its occurred_at (from the body). Answers
 * `take` with what it recorded since the last `take`, and `cpu` with its own CPU time.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { answer } from '../lib/child.ts';

export type Receipt = { delivery: string; event: string; occurredAt: string; at: number };
export type ReceiverReady = { url: string; pid: number };
export type ReceiverMessage = { op: 'take' } | { op: 'cpu' };

// Sub-millisecond wall clock: the same clock as Date.now(), which Postgres and the roles read too.
const wallMs = () => performance.timeOrigin + performance.now();

let receipts: Receipt[] = [];
let connections = 0;
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = wallMs();
    const delivery = String(req.headers['x-uptime-delivery'] ?? '');
    let event = '';
    let occurredAt = '';
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string; occurred_at?: string };
      event = body.id ?? '';
      occurredAt = body.occurred_at ?? '';
    } catch {
      // recorded without them: the part counts it as not one of its alerts
    }
    receipts.push({ delivery, event, occurredAt, at });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.end('{"ok":true}');
  });
});
server.on('connection', () => connections++);
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  const port = addr && typeof addr === 'object' ? addr.port : 0;
  void answer({ url: `http://127.0.0.1:${port}`, pid: process.pid } satisfies ReceiverReady);
});

process.on('message', (m: ReceiverMessage) => {
  if (m.op === 'take') {
    const out = receipts;
    receipts = [];
    void answer({ receipts: out, connections });
  } else if (m.op === 'cpu') {
    const u = process.cpuUsage();
    void answer({ cpuUs: u.user + u.system });
  }
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
