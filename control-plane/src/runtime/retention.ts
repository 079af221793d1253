import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';

/** Rows deleted per statement: short transactions, no long locks. */
const CHUNK = 10_000;

export interface RetentionDays {
  /** Raw check results (hourly rollups stay, so long-range charts outlive them). */
  results: number;
  /** Published events, finished deliveries and trigger calls. */
  history: number;
}

/**
 * What is deleted, each kind by its own age column: raw check results; events once published
 * and routed (never one the outbox still has to publish, nor an alert still waiting for its deliveries); deliveries once delivered or dead (never one still
 * pending or being sent); trigger calls. A delivery row is also what makes an event's
 * notifications idempotent: it must outlive the event in EVENTS (30 days), which the setting's
 * lower bound guarantees.
 */
const kinds = [
  {
    what: 'check results',
    days: (d: RetentionDays) => d.results,
    chunk: (sql: Sql, cutoff: string) => sql`
      delete from check_results where ctid = any(array(
        select ctid from check_results where scheduled_at < ${cutoff} limit ${CHUNK}))`,
  },
  {
    what: 'published events',
    days: (d: RetentionDays) => d.history,
    chunk: (sql: Sql, cutoff: string) => sql`
      delete from outbox_events where ctid = any(array(
        select ctid from outbox_events where created_at < ${cutoff} and published_at is not null and notified_at is not null limit ${CHUNK}))`,
  },
  {
    what: 'finished deliveries',
    days: (d: RetentionDays) => d.history,
    chunk: (sql: Sql, cutoff: string) => sql`
      delete from deliveries where ctid = any(array(
        select ctid from deliveries where created_at < ${cutoff} and status in ('delivered', 'dead') limit ${CHUNK}))`,
  },
  {
    what: 'trigger calls',
    days: (d: RetentionDays) => d.history,
    chunk: (sql: Sql, cutoff: string) => sql`
      delete from trigger_events where ctid = any(array(
        select ctid from trigger_events where fired_at < ${cutoff} limit ${CHUNK}))`,
  },
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
        const { count } = await kind.chunk(opts.sql, cutoff);
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
