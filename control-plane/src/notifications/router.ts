import { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';
import { listenForWork } from '../platform/db/wakeup.ts';
import { releaseDependents, releaseGroups, releaseHeld, releaseSettled, routeAlerts } from './hold.ts';
import { stepAlerts } from '../alerts/steps.ts';
import { claimAlerts, markNotified } from './repo.ts';

/** Held alerts released in one transaction at most. */
const MAX_BATCH = 100;

/**
 * Alert events routed in one transaction at most. A batch costs some ten statements whatever its
 * size, each waiting its turn on a process that is also sending: at 100 a burst of 10,000 took
 * 100 transactions one after another and routing was the slowest step (docs/benchmarks.md, alerts).
 */
const ROUTE_BATCH = 500;

/** Batches routed at once. */
const ROUTE_LANES = 2;

/** How long an event whose routing failed is left alone before it is tried again. */
const RETRY_AFTER_MS = 5_000;

/** How long an up waits while its down is still being decided elsewhere. */
const DEFER_MS = 500;

/** The release passes run at most this often (or every poll, if shorter) from the router's own loop; route() always runs them. */
const RELEASE_EVERY_MS = 250;

export interface RouterStats {
  /** Transactions that routed events. */
  batches: number;
  events: number;
  deliveries: number;
  /** Outbox rows that are not events, marked and left without deliveries. */
  invalid: number;
  /** Downs held by a maintenance window; ups dropped with their unsent down; held downs released at the window's end. */
  held: number;
  dropped: number;
  released: number;
  /** Ups left for a moment because their down was still being decided by another router. */
  deferred: number;
}

export interface Router {
  /** Routes what is waiting now (also done on every wake-up); the events routed. */
  routeNow(): Promise<number>;
  stats(): RouterStats;
  stop(): Promise<void>;
}

/**
 * The notify role's router: alert events recorded in the outbox (in the transaction of the state
 * change they report) become their deliveries, a batch per transaction. The outbox table is the
 * queue: an event waits there (notified_at null) until a router has made its deliveries, so
 * nothing between the change and its deliveries can be lost, whichever process dies when.
 * Routers in several processes share the backlog (claimAlerts skips rows another one holds).
 */
export function startRouter(opts: { sql: Sql; log: Logger; pollMs: number; now?: () => Date }): Router {
  const log = opts.log.child({ component: 'notify-router' });
  const clockNow = opts.now ?? (() => new Date());
  const counters: RouterStats = { batches: 0, events: 0, deliveries: 0, invalid: 0, held: 0, dropped: 0, released: 0, deferred: 0 };
  const count = (r: { held: number; dropped: number; deferred: string[] }) => {
    counters.held += r.held;
    counters.dropped += r.dropped;
    counters.deferred += r.deferred.length;
    // Left for a moment: an earlier alert of the same subject is being decided by another router.
    for (const id of r.deferred) failing.set(id, Date.now() + DEFER_MS);
  };
  // Events whose routing failed, by id, with when they may be tried again.
  const failing = new Map<string, number>();

  const routeBatch = (skip: string[]) =>
    opts.sql.begin(async (tx) => {
      const rows = await claimAlerts(tx, ROUTE_BATCH, skip);
      const events: DomainEvent[] = [];
      const unreadable: string[] = [];
      for (const row of rows) {
        const parsed = DomainEvent.safeParse(row.payload);
        if (parsed.success) events.push(parsed.data);
        else unreadable.push(row.id);
      }
      if (unreadable.length > 0) {
        // No one can ever send these: marked, so that they are not read again.
        log.warn({ eventIds: unreadable }, 'invalid events in the outbox left without deliveries');
        await markNotified(tx, unreadable);
        counters.invalid += unreadable.length;
      }
      const routed = await routeAlerts(tx, events, clockNow());
      return { rows: rows.length, events, routed };
    });

  const routeOne = async (event: DomainEvent) => {
    try {
      const routed = await opts.sql.begin((tx) => routeAlerts(tx, [event], clockNow()));
      count(routed);
      counters.events++;
      counters.deliveries += routed.deliveries;
    } catch (err) {
      log.error({ err, eventId: event.id }, 'event not routed; trying again later');
      failing.set(event.id, Date.now() + RETRY_AFTER_MS);
    }
  };

  // Held alerts whose time has come (ADR 0029, ADR 0030), judged by the clock every rule reads:
  // maintenance ended, a parent's outage over or a child's wait run out, a group's window ended;
  // and flapping monitors that have settled.
  const releaseNow = async (): Promise<number> => {
    let released = 0;
    const passes: [string, (now: Date) => Promise<{ rows: number; released?: number; deliveries: number }>, number][] = [
      ['maintenance', (now) => opts.sql.begin((tx) => releaseHeld(tx, now, MAX_BATCH)), MAX_BATCH],
      ['dependency', (now) => opts.sql.begin((tx) => releaseDependents(tx, now, MAX_BATCH)), MAX_BATCH],
      ['group', (now) => opts.sql.begin((tx) => releaseGroups(tx, now)), Infinity],
      ['settled', (now) => opts.sql.begin((tx) => releaseSettled(tx, now, MAX_BATCH)), MAX_BATCH],
      // Open alerts due a re-notification or their escalation (ADR 0032).
      ['alert steps', (now) => opts.sql.begin(async (tx) => ({ ...(await stepAlerts(tx, now, MAX_BATCH)), released: 0 })), MAX_BATCH],
    ];
    for (const [reason, pass, limit] of passes) {
      for (;;) {
        const r = await pass(clockNow());
        counters.released += r.released ?? 0;
        counters.deliveries += r.deliveries;
        released += r.released ?? 0;
        if ((r.released ?? 0) > 0 || r.deliveries > 0)
          log.info(
            { reason, released: r.released, deliveries: r.deliveries },
            reason === 'alert steps' ? 'alert steps taken' : 'held alerts released',
          );
        if (r.rows < limit || r.rows === 0) break;
      }
    }
    return released;
  };

  let releasedAt = 0;
  const release = async (when: 'always' | 'due') => {
    if (when === 'due' && Date.now() - releasedAt < Math.min(RELEASE_EVERY_MS, opts.pollMs)) return 0;
    releasedAt = Date.now();
    return releaseNow();
  };

  /** Routes batches until one comes back short; how many events it routed. */
  const lane = async (): Promise<number> => {
    let routed = 0;
    for (;;) {
      const now = Date.now();
      for (const [id, until] of failing) if (until <= now) failing.delete(id);
      let batch;
      try {
        batch = await routeBatch([...failing.keys()]);
      } catch (err) {
        // Usually the database is away; but one event that cannot be routed must not hold back
        // the others: the batch is read again and tried event by event.
        log.warn({ err }, 'routing a batch failed; trying its events one by one');
        // Read only: each event is then routed in a transaction of its own (a repeat is a no-op).
        const rows = await opts.sql.begin((tx) => claimAlerts(tx, ROUTE_BATCH, [...failing.keys()]));
        for (const row of rows) {
          const parsed = DomainEvent.safeParse(row.payload);
          if (parsed.success) await routeOne(parsed.data);
        }
        if (rows.length < ROUTE_BATCH) return routed;
        continue;
      }
      if (batch.rows > 0) counters.batches++;
      count(batch.routed);
      const settled = batch.events.length - batch.routed.deferred.length;
      counters.events += settled;
      counters.deliveries += batch.routed.deliveries;
      routed += settled;
      if (batch.routed.deliveries > 0 || batch.routed.held > 0) {
        log.info({ events: settled, deliveries: batch.routed.deliveries, held: batch.routed.held }, 'events routed');
      }
      if (batch.rows < ROUTE_BATCH) return routed;
    }
  };

  // A burst is routed ROUTE_LANES batches at a time: each claim skips the rows the other holds,
  // as the routers of two processes do, so the batches of 2,000 alerts at once are not four
  // transactions one after another.
  const routeNow = async (releases: 'always' | 'due' = 'always'): Promise<number> => {
    const routed = await Promise.all(Array.from({ length: ROUTE_LANES }, lane));
    return routed.reduce((t, n) => t + n, 0) + (await release(releases));
  };

  const wakeup = listenForWork(opts.sql, 'alerts_recorded', log);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      // Held alerts are released by the clock, looked at on each poll; a burst of wake-ups (one
      // per transaction that records alerts) need not run the four release passes each time.
      await routeNow('due').catch((err: unknown) => log.warn({ err }, 'routing failed; trying again'));
      // A claim skips the rows another router holds: that router routes them. Nothing else locks
      // alert events (the outbox publisher dequeues them from a table of its own, ADR 0043), so
      // what a drain left is another router's work, or work announced by a wake-up since.
      if (!stopped) await wakeup.wait(opts.pollMs);
    }
  })();

  return {
    routeNow: () => routeNow('always'),
    stats: () => ({ ...counters }),
    async stop() {
      stopped = true;
      await wakeup.close();
      await loop;
    },
  };
}
