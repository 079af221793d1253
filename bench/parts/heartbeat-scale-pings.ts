import { successPing } from '../lib/publish.ts';
/**
 * The ping load of the heartbeat-scale part, in a process of its own: success pings to heartbeats
 * drawn at random from the database's, published to PINGS the way a ping edge does
 * (`createAckPublisher`, one subject per partition and heartbeat, Nats-Msg-Id = ping id) at a
 * fixed rate for a fixed time; at most `window` wait for their ack, so a stream that falls behind
 * slows the load rather than piling it up. Answers `{ sent, stored, failed, behind }` over IPC.
 * Argument: JSON PingsArgs.
 */
import { performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { createSql } from '../../control-plane/src/platform/db/sql.ts';
import { createAckPublisher } from '../../shared/src/ack-publisher.ts';
import type { Ping } from '../../shared/src/contracts/pings.ts';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { answer } from '../lib/child.ts';
import { benchLog } from '../lib/infra.ts';

export type PingsArgs = {
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  partitions: number;
  perSecond: number;
  durationMs: number;
  /** The first heartbeats by id get no ping (those whose misses the part watches). */
  skipFirst: number;
  window: number;
};
export type PingsDone = { sent: number; stored: number; failed: number; behind: number; wallMs: number };

const args = JSON.parse(process.argv[2]!) as PingsArgs;
// The part ended without stopping this process: it stops too.
process.on('disconnect', () => process.exit(0));
const sql = createSql(args.databaseUrl, { log: benchLog, max: 1, applicationName: 'uptime-bench-pings' });
const ids = ((await sql`select id from heartbeats order by id offset ${args.skipFirst}`) as unknown as { id: string }[]).map((r) => r.id);
await sql.end({ timeout: 5 });
const subjects = new Map<string, string>();
const names = natsNames(args.namespace);
const subjectOf = (id: string) => {
  let s = subjects.get(id);
  if (s === undefined) {
    s = names.subjects.ping(pingPartition(id, args.partitions), id);
    subjects.set(id, s);
  }
  return s;
};
const nc = await connect({ servers: args.natsUrl, name: 'bench-heartbeat-scale-pings' });
const publisher = createAckPublisher(nc);

await answer({ ready: true, heartbeats: ids.length });
await new Promise<void>((resolve) => process.once('message', () => resolve()));

let sent = 0;
let stored = 0;
let failed = 0;
let inFlight = 0;
const t0 = performance.now();
const one = () => {
  const id = ids[Math.floor(Math.random() * ids.length)]!;
  const ping: Ping = successPing(id);
  sent++;
  inFlight++;
  void publisher.publish(subjectOf(id), JSON.stringify(ping), ping.id).then((ok) => {
    inFlight--;
    if (ok) stored++;
    else failed++;
  });
};
// Every 5 ms, what the rate allows by now and the window leaves room for.
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const elapsed = performance.now() - t0;
    if (elapsed >= args.durationMs) {
      clearInterval(tick);
      resolve();
      return;
    }
    const due = Math.floor((args.perSecond * elapsed) / 1000);
    while (sent < due && inFlight < args.window) one();
  }, 5);
});
const wallMs = performance.now() - t0;
const behind = Math.floor((args.perSecond * wallMs) / 1000) - sent;
await publisher.close();
await nc.close();
await answer({ sent, stored, failed, behind, wallMs } satisfies PingsDone);
process.exit(0);
