import type { Logger } from '../../../shared/src/logger.ts';
import { pruneExpiryWarnings } from '../monitors/expiry-repo.ts';
import { pruneResults } from '../monitors/repo.ts';
import { pruneSettledHolds } from '../notifications/held-repo.ts';
import { pruneFinishedDeliveries } from '../notifications/repo.ts';
import type { Sql } from '../platform/db/sql.ts';
import { prunePublishedEvents } from '../platform/outbox.ts';
import { pruneOutages } from '../status-pages/incidents/drafts-repo.ts';
import { pruneNotices, prunePendingSubscribers } from '../status-pages/subscribers/repo.ts';
import { PENDING_DAYS } from '../status-pages/subscribers/rules.ts';
import { pruneCalls } from '../triggers/repo.ts';

/** Rows deleted per statement: short transactions, no long locks. */
const CHUNK = 10_000;

export interface RetentionDays {
  /** Raw check results (hourly rollups stay, so long-range charts outlive them). */
  results: number;
  /** Published events, finished deliveries and trigger calls. */
  history: number;
}

/**
 * What is deleted, each kind by its own age column and by the domain that owns it: raw check
 * results; events once published and routed; deliveries once delivered or dead; held alerts once
 * settled; trigger calls; expiry warnings once what they warned of has expired; the outages the
 * status page drafter has seen; subscriptions never confirmed (after a week); notices sent to
 * status page subscribers.
 * A delivery row is also what makes an event's notifications idempotent: it must outlive the
 * event in EVENTS (30 days), which the setting's lower bound guarantees.
 */
const kinds = [
  { what: 'check results', days: (d: RetentionDays) => d.results, prune: pruneResults },
  { what: 'published events', days: (d: RetentionDays) => d.history, prune: prunePublishedEvents },
  { what: 'finished deliveries', days: (d: RetentionDays) => d.history, prune: pruneFinishedDeliveries },
  { what: 'settled held alerts', days: (d: RetentionDays) => d.history, prune: pruneSettledHolds },
  { what: 'trigger calls', days: (d: RetentionDays) => d.history, prune: pruneCalls },
  { what: 'expiry warnings of expired certificates and domains', days: (d: RetentionDays) => d.history, prune: pruneExpiryWarnings },
  { what: 'outages seen by the status page drafter', days: (d: RetentionDays) => d.history, prune: pruneOutages },
  { what: 'status page subscriptions never confirmed', days: () => PENDING_DAYS, prune: prunePendingSubscribers },
  { what: 'status page notices sent', days: (d: RetentionDays) => d.history, prune: pruneNotices },
];

export interface Retention {
  /** Deletes what is past its retention now; the rows deleted, by kind. */
  run(): Promise<Record<string, number>>;
  stop(): void;
}

/** Deletes history past its retention every `everyMs` (an hour), a bounded chunk at a time. */
export function startRetention(opts: { sql: Sql; log: Logger; days: RetentionDays; everyMs?: number; now?: () => Date }): Retention {
  const now = opts.now ?? (() => new Date());
  let running: Promise<Record<string, number>> | undefined;
  const once = async () => {
    const deleted: Record<string, number> = {};
    for (const kind of kinds) {
      const cutoff = new Date(now().getTime() - kind.days(opts.days) * 86_400_000).toISOString();
      let total = 0;
      for (;;) {
        const count = await kind.prune(opts.sql, cutoff, CHUNK);
        total += count;
        if (count < CHUNK) break;
      }
      deleted[kind.what] = total;
      if (total > 0) opts.log.info({ deleted: total, cutoff }, `old ${kind.what} deleted`);
    }
    return deleted;
  };
  // One run at a time: an hourly run still going when the next is due is not doubled.
  const run = () => (running ??= once().finally(() => (running = undefined)));
  const timer = setInterval(
    () => void run().catch((err: unknown) => opts.log.warn({ err }, 'retention failed')),
    opts.everyMs ?? 3_600_000,
  );
  timer.unref();
  return { run, stop: () => clearInterval(timer) };
}
