import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { AlertActions, Notification } from '../../../shared/src/contracts/notify.ts';
import type { Db, Sql } from '../platform/db/sql.ts';
import { listenForWork } from '../platform/db/wakeup.ts';
import { afterFailure, type Backoff } from './backoff.ts';
import type { Channels } from './channels/index.ts';
import { asDeliveryError, DeliveryError, scrub } from './errors.ts';
import { groupCommit } from './group-commit.ts';
import { settingsCache } from './integrations/config.ts';
import { noteFailure, noteSuccess } from './integration-health.ts';
import { claimDue, markDead, markDelivered, markDeliveredOne, markRetry, type Claimed } from './repo.ts';

export interface WorkerOptions {
  sql: Sql;
  log: Logger;
  integrationSecrets: Buffer;
  channels: Channels;
  maxAttempts: number;
  backoff: Backoff;
  /** How long a claim lasts: longer than any one send. A worker that dies holding one frees it then. */
  leaseMs: number;
  /** Sends in flight at most. */
  concurrency: number;
  /** How often the table is looked at without a wake-up. */
  pollMs: number;
  /** Counts each outcome by channel (`uptime_notify_deliveries_total`). */
  metrics?: Pick<Metrics, 'notifyDeliveries'>;
  /** The signed links of a message about an open alert (alerts/links.ts), made as it is sent. */
  actionsFor?: (n: Notification) => AlertActions | undefined;
  /** Publishes the events an outcome recorded (an integration failing or recovered) on EVENTS. */
  publish?: (events: DomainEvent[]) => Promise<void>;
  now?: () => Date;
}

export interface WorkerStats {
  delivered: number;
  retried: number;
  dead: number;
  /** Outcomes that could not be recorded (the database away): the claim runs out and the delivery is tried again. */
  unrecorded: number;
}

/** Tries to record an outcome for a few seconds: a lost record means the delivery is sent again. */
async function record(write: () => Promise<void>, log: Logger): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return true;
    } catch (err) {
      if (attempt >= 5) {
        log.error({ err }, 'delivery outcome not recorded; it will be tried again once its claim runs out');
        return false;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/**
 * The delivery workers of one process: the deliveries table is the queue. Due deliveries are
 * claimed in batches (a conditional update that skips rows other workers hold), each is sent once
 * per claim and its outcome recorded: delivered, dead, or pending again after the back-off.
 * Inserted deliveries wake the workers (a trigger's pg_notify); a retry wakes the process that
 * scheduled it when it is due; everything else is found by looking every `pollMs`.
 */
export function startDeliveryWorker(opts: WorkerOptions): { stop(): Promise<void>; stats(): WorkerStats } {
  const log = opts.log.child({ component: 'notify-worker' });
  const counters: WorkerStats = { delivered: 0, retried: 0, dead: 0, unrecorded: 0 };
  const wakeup = listenForWork(opts.sql, 'deliveries_due', log);
  const retryTimers = new Set<NodeJS.Timeout>();
  const outcome = (d: Claimed, status: 'delivered' | 'retried' | 'dead') => {
    counters[status]++;
    opts.metrics?.notifyDeliveries.inc({ channel: d.integration_type, status });
  };

  const now = opts.now ?? (() => new Date());
  const withActions = (n: Notification): Notification => {
    const actions = opts.actionsFor?.(n);
    return actions ? { ...n, actions } : n;
  };

  // Sends that finish while a record is being written are recorded together by the next one:
  // one UPDATE and one commit for all of them instead of one each, which was most of the
  // worker's round trips and of Postgres' work under load. Each attempt still waits for its own
  // record, so a delivery is never counted delivered (nor its slot freed) before it is written.
  const recordDelivered = groupCommit(
    (ids: string[]) => record(() => markDelivered(opts.sql, ids), log.child({ deliveryIds: ids })),
    opts.concurrency,
  );

  const settingsOf = settingsCache(opts.integrationSecrets);

  const attempt = async (d: Claimed) => {
    const dlog = log.child({ deliveryId: d.id, integrationId: d.integration_id, type: d.integration_type, attempt: d.attempts });
    let secrets: string[] = [];
    try {
      if (!d.integration_active) throw new DeliveryError('the integration is paused', { permanent: true });
      const settings = settingsOf(d.integration_type, d.config, d.secrets_sealed);
      secrets = settings.secrets;
      await opts.channels[d.integration_type].send({
        id: d.id,
        attempt: d.attempts,
        notification: withActions(d.payload),
        integration: { id: d.integration_id, name: d.integration_name },
        config: settings.config,
        template: d.template,
      });
    } catch (err) {
      const failure = asDeliveryError(err);
      const error = scrub(failure.message, secrets);
      const next = afterFailure(d.attempts, opts.maxAttempts, failure, opts.backoff);
      // The outcome and the integration's run of failures in one transaction (ADR 0032).
      const failed = (mark: (tx: Db) => Promise<boolean>) => async () => {
        const event = await opts.sql.begin(async (tx) =>
          (await mark(tx)) && d.integration_active ? noteFailure(tx, d.integration_id, error, now()) : null,
        );
        if (event) {
          dlog.warn({ failures: event.data.failures }, 'integration failing: the project is told through its other integrations');
          await opts.publish?.([event]).catch(() => undefined);
        }
      };
      if (next.kind === 'dead') {
        if (
          !(await record(
            failed((tx) => markDead(tx, d.id, d.attempts, error)),
            dlog,
          ))
        )
          return void counters.unrecorded++;
        outcome(d, 'dead');
        dlog.warn({ error, permanent: failure.permanent }, 'delivery dead');
      } else {
        if (
          !(await record(
            failed((tx) => markRetry(tx, d.id, d.attempts, error, next.delayMs)),
            dlog,
          ))
        )
          return void counters.unrecorded++;
        outcome(d, 'retried');
        dlog.info({ error, delayMs: next.delayMs }, 'delivery failed; retrying');
        const timer = setTimeout(() => {
          retryTimers.delete(timer);
          wakeup.wake();
        }, next.delayMs);
        retryTimers.add(timer);
      }
      return;
    }
    // Sent: if the outcome cannot be recorded, the claim runs out and the delivery may be sent again.
    // An integration with a run of failures ends it with this delivery (ADR 0032): recorded on its
    // own, with the integration's count, in one transaction; every other delivery joins the group.
    const delivered =
      d.integration_failures > 0
        ? record(async () => {
            const event = await opts.sql.begin(async (tx) =>
              (await markDeliveredOne(tx, d.id)) ? noteSuccess(tx, d.integration_id, now()) : null,
            );
            if (event) await opts.publish?.([event]).catch(() => undefined);
          }, dlog)
        : recordDelivered(d.id);
    if (!(await delivered)) return void counters.unrecorded++;
    outcome(d, 'delivered');
    dlog.info('delivered');
  };

  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  const claimAtLeast = Math.max(1, Math.floor(opts.concurrency / 4));
  const loop = (async () => {
    while (!stopped) {
      const room = opts.concurrency - inFlight.size;
      // While sends are in flight, claim once a quarter of the slots is free: one claim then takes
      // many deliveries, not one per finished send.
      if (room <= 0 || (inFlight.size > 0 && room < claimAtLeast)) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed: Claimed[];
      try {
        claimed = await claimDue(opts.sql, room, opts.leaseMs);
      } catch (err) {
        log.warn({ err }, 'claiming deliveries failed; trying again');
        await wakeup.wait(opts.pollMs);
        continue;
      }
      for (const d of claimed) {
        const p: Promise<void> = attempt(d)
          .catch((err: unknown) => log.error({ err, deliveryId: d.id }, 'delivery attempt failed'))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      // A full batch: more may be due at once.
      if (claimed.length < room && !stopped) await wakeup.wait(opts.pollMs);
    }
    await Promise.allSettled([...inFlight]);
  })();

  return {
    stats: () => ({ ...counters }),
    async stop() {
      stopped = true;
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      await wakeup.close();
      await loop;
    },
  };
}
