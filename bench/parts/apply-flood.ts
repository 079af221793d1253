/**
 * The flood of the `apply` part, in a process of its own (so its publishing does not take the
 * measured role's CPU): one heartbeat's pings published as fast as one connection gets them
 * acknowledged, for a given time. Answers `{ sent }` over IPC.
 * Arguments: natsUrl namespace heartbeatId partitions durationMs
 */
import { performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { pingPartition } from '../../shared/src/pings/partition.ts';
import { natsNames } from '../../shared/src/subjects.ts';
import { publishWindowed, successPing } from '../lib/publish.ts';

const [natsUrl, namespace, heartbeatId, partitions, durationMs] = process.argv.slice(2);
const nc = await connect({ servers: natsUrl!, name: 'bench-apply-flood' });
const subject = natsNames(namespace!).subjects.ping(pingPartition(heartbeatId!, Number(partitions)), heartbeatId!);
const until = performance.now() + Number(durationMs);
let sent = 0;
while (performance.now() < until) {
  const r = await publishWindowed(
    nc,
    2_000,
    () => {
      const p = successPing(heartbeatId!, 'loop');
      return { subject, payload: JSON.stringify(p), msgId: p.id };
    },
    256,
  );
  sent += r.acked;
}
await nc.close();
process.send!({ sent });
