import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { durableConsumer } from '../platform/nats/durable.ts';
import { NotifyJob } from '../../../shared/src/contracts/notify.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import type { NatsConnection } from '../../../shared/src/nats.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Sql } from '../platform/db/sql.ts';
import type { Channels } from './channels/index.ts';
import { storedSettings } from './integrations/config.ts';
import { afterFailure, type Backoff } from './backoff.ts';
import { asDeliveryError, DeliveryError, scrub } from './errors.ts';
import { claim, markDead, markDelivered, markRetry, type Claimed } from './repo.ts';

export const WORKER_CONSUMER = 'notify';

export interface WorkerOptions {
  sql: Sql;
  nc: NatsConnection;
  names: Names;
  log: Logger;
  integrationSecrets: Buffer;
  channels: Channels;
  maxAttempts: number;
  backoff: Backoff;
  /** How long a claim (and the message's ack wait) lasts: longer than any one send. */
  leaseMs: number;
  concurrency: number;
  /** Counts each outcome by channel (`uptime_notify_deliveries_total`). */
  metrics?: Pick<Metrics, 'notifyDeliveries'>;
}

export interface WorkerStats {
  delivered: number;
  retried: number;
  dead: number;
  settled: number;
  invalid: number;
}

/**
 * The NOTIFY work queue: one message per delivery. Each message claims its delivery row, sends
 * once, records the outcome, then acknowledges (delivered, dead) or hands the message back with
 * the back-off as its delay (nak). A redelivered message whose delivery is already settled is
 * acknowledged without sending.
 */
export async function startDeliveryWorker(opts: WorkerOptions): Promise<{ stop(): Promise<void>; stats(): WorkerStats }> {
  const log = opts.log.child({ component: 'notify-worker' });
  const consumer = await durableConsumer(opts.nc, opts.names.streams.notify, {
    durable_name: WORKER_CONSUMER,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(opts.leaseMs),
    max_ack_pending: 10_000,
  });
  const counters: WorkerStats = { delivered: 0, retried: 0, dead: 0, settled: 0, invalid: 0 };
  const outcome = (d: Claimed, status: 'delivered' | 'retried' | 'dead') => {
    counters[status]++;
    opts.metrics?.notifyDeliveries.inc({ channel: d.integration_type, status });
  };

  const attempt = async (msg: JsMsg, d: Claimed) => {
    const dlog = log.child({ deliveryId: d.id, integrationId: d.integration_id, type: d.integration_type, attempt: d.attempts });
    let secrets: string[] = [];
    try {
      if (!d.integration_active) throw new DeliveryError('the integration is paused', { permanent: true });
      const settings = storedSettings(d.integration_type, d.config, d.secrets_sealed, opts.integrationSecrets);
      secrets = settings.secrets;
      await opts.channels[d.integration_type].send({
        id: d.id,
        attempt: d.attempts,
        notification: d.payload,
        integration: { id: d.integration_id, name: d.integration_name },
        config: settings.config,
      });
    } catch (err) {
      const failure = asDeliveryError(err);
      const error = scrub(failure.message, secrets);
      const next = afterFailure(d.attempts, opts.maxAttempts, failure, opts.backoff);
      if (next.kind === 'dead') {
        await markDead(opts.sql, d.id, d.attempts, error);
        // No reason text: nats-server 2.9 ignores a +TERM that carries one.
        msg.term();
        outcome(d, 'dead');
        dlog.warn({ error, permanent: failure.permanent }, 'delivery dead');
      } else {
        await markRetry(opts.sql, d.id, d.attempts, error, next.delayMs);
        msg.nak(next.delayMs);
        outcome(d, 'retried');
        dlog.info({ error, delayMs: next.delayMs }, 'delivery failed; retrying');
      }
      return;
    }
    // Sent: if recording fails now, the message comes back after the lease and may send again.
    await markDelivered(opts.sql, d.id);
    msg.ack();
    outcome(d, 'delivered');
    dlog.info('delivered');
  };

  const handle = async (msg: JsMsg) => {
    let job: NotifyJob;
    try {
      job = NotifyJob.parse(msg.json());
    } catch {
      counters.invalid++;
      log.warn({ subject: msg.subject, seq: msg.seq }, 'invalid notify message terminated');
      msg.term();
      return;
    }
    try {
      const c = await claim(opts.sql, job.delivery_id, opts.leaseMs);
      if (c.kind === 'settled') {
        counters.settled++;
        msg.ack();
      } else if (c.kind === 'wait') {
        msg.nak(Math.max(50, c.ms));
      } else {
        await attempt(msg, c.delivery);
      }
    } catch (err) {
      log.error({ err, deliveryId: job.delivery_id }, 'delivery bookkeeping failed; the message comes back later');
      // In a few seconds, not after the whole ack wait (the lease, a minute): the database was
      // away, most likely. A claim taken before the failure still holds off a second send.
      try {
        msg.nak(5_000);
      } catch {
        // NATS away as well: the ack wait brings it back.
      }
    }
  };

  let stopped = false;
  // The pull in progress, ended by stop() so that stopping does not wait out its expiry.
  let pulling: ConsumerMessages | undefined;
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    while (!stopped) {
      const room = opts.concurrency - inFlight.size;
      if (room <= 0) {
        await Promise.race(inFlight);
        continue;
      }
      try {
        const iter = await consumer.fetch({ max_messages: room, expires: 1_000 });
        pulling = iter;
        for await (const m of iter) {
          const p: Promise<void> = handle(m).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'fetching deliveries failed; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    await Promise.allSettled([...inFlight]);
  })();

  return {
    stats: () => ({ ...counters }),
    async stop() {
      stopped = true;
      pulling?.stop();
      await loop;
    },
  };
}
