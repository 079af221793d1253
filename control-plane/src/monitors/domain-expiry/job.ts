import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import { version } from '../../../../shared/src/version.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Sql } from '../../platform/db/sql.ts';
import type { OutboxPublisher } from '../../platform/outbox.ts';
import { domainSubject, recordWarnings, type DueWarning } from '../expiry-repo.ts';
import { expiryWarningsDue } from '../expiry-warnings.ts';
import { createRdapClient, RdapError, type RdapClient } from './rdap.ts';
import {
  domainInUse,
  domainUsers,
  dueDomains,
  fillMonitorDomains,
  holdLease,
  postponeLookup,
  releaseLease,
  saveLookup,
  type DomainRow,
  type LookupOutcome,
} from './repo.ts';
import { nextLookupAt, settledFailure } from './rules.ts';

const DAY_MS = 86_400_000;
const LEASE = 'domain-expiry';
/** Domains looked up in one pass at most, and at once: a registry is asked politely, and a pass ends. */
const MAX_PER_PASS = 200;
const CONCURRENCY = 4;
/** Monitors whose domain is worked out per statement. */
const FILL_BATCH = 1_000;

export interface DomainExpiryJob {
  /** One pass now, after any pass under way: the domains looked up (0 when another process holds the lease). */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

export interface DomainExpiryOptions {
  sql: Sql;
  log: Logger;
  /** Judges when a lookup is due and when a warning is (a test moves it a day). */
  clock: Clock;
  bootstrapUrl: string;
  outbox?: Pick<OutboxPublisher, 'publish'>;
  /** Real time between passes (default a minute). */
  everyMs?: number;
  /** How long the lease lasts without a renewal (default 2 minutes). */
  leaseMs?: number;
  /** A client of its own (tests); else one with the bootstrap URL and its time and size limits. */
  client?: RdapClient;
}

/**
 * Domain expiry: once a day per registrable domain an active monitor uses, asks the registry
 * (RDAP) when its registration runs out, stores it (domain_expiry) and records each monitor's
 * warning due (monitor.domain_expiring, once per threshold per expiry date) in the same
 * transaction. One process of the deployment looks up at a time, under a lease in Postgres that
 * it renews between lookups; the others stand by. A pass runs every minute in the background:
 * start-up never waits for it, a slow registry delays only its own domain, and a failure is
 * logged and tried again when nextLookupAt says.
 */
export function startDomainExpiry(opts: DomainExpiryOptions): DomainExpiryJob {
  const log = opts.log.child({ component: 'domain-expiry' });
  const leaseMs = opts.leaseMs ?? 120_000;
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const client = opts.client ?? createRdapClient({ bootstrapUrl: opts.bootstrapUrl, userAgent: `uptime-rdap/${version}` });
  const now = () => new Date(opts.clock.now());

  /** Looks one domain up and stores the outcome with the warnings it makes due; the events recorded. */
  const lookUp = async (row: DomainRow): Promise<DomainEvent[]> => {
    if (!(await domainInUse(opts.sql, row.domain))) {
      await postponeLookup(opts.sql, row.domain, new Date(now().getTime() + DAY_MS));
      return [];
    }
    const outcome = await ask(row.domain);
    // A failed lookup keeps the last date known, and warnings still come from it.
    const expiresAt = outcome.expiresAt === undefined ? (row.expires_at === null ? null : new Date(row.expires_at)) : outcome.expiresAt;
    const registrar = outcome.registrar === undefined ? row.registrar : outcome.registrar;
    return opts.sql.begin(async (tx) => {
      await saveLookup(tx, row.domain, outcome);
      if (expiresAt === null) return [];
      const due: DueWarning[] = [];
      for (const user of await domainUsers(tx, row.domain, domainSubject(row.domain, expiresAt.toISOString()))) {
        const threshold = expiryWarningsDue({
          expiresAt,
          now: outcome.lookedUpAt,
          thresholdsDays: user.thresholds,
          alreadySent: user.sent,
        });
        if (threshold === null) continue;
        const daysLeft = Math.round(((expiresAt.getTime() - outcome.lookedUpAt.getTime()) / DAY_MS) * 1000) / 1000;
        due.push({
          kind: 'domain',
          monitor: { id: user.id, project_id: user.project_id, name: user.name, url: user.url },
          domain: { name: row.domain, expires_at: expiresAt.toISOString(), registrar, days_left: daysLeft },
          threshold,
          thresholdsDays: user.thresholds,
          at: outcome.lookedUpAt,
        });
      }
      return recordWarnings(tx, due);
    });
  };

  /** The registry's answer as an outcome to store; a failure is an outcome too, never thrown. */
  const ask = async (domain: string): Promise<LookupOutcome> => {
    try {
      const answer = await client.lookup(domain);
      const lookedUpAt = now();
      return {
        lookedUpAt,
        ok: true,
        expiresAt: answer.expiresAt,
        registrar: answer.registrar,
        error: null,
        nextLookupAt: nextLookupAt(lookedUpAt, true, lookedUpAt),
      };
    } catch (err) {
      const lookedUpAt = now();
      const known = err instanceof RdapError;
      // RDAP errors name the server's host only, never what it sent.
      log.warn({ domain, kind: known ? err.kind : 'unexpected', ...(known ? { error: err.message } : { err }) }, 'domain lookup failed');
      return {
        lookedUpAt,
        ok: false,
        error: known ? err.message : 'The lookup failed unexpectedly',
        nextLookupAt: nextLookupAt(lookedUpAt, known && settledFailure(err.kind), lookedUpAt),
      };
    }
  };

  const pass = async (): Promise<number> => {
    if (!(await holdLease(opts.sql, LEASE, holder, leaseMs))) return 0;
    for (let filled = FILL_BATCH; filled === FILL_BATCH;) filled = await fillMonitorDomains(opts.sql, FILL_BATCH, now());
    const due = await dueDomains(opts.sql, now(), MAX_PER_PASS);
    let looked = 0;
    for (let at = 0; at < due.length; at += CONCURRENCY) {
      // Renewed before each round: a process that lost it (paused, cut off) stops looking up.
      if (at > 0 && !(await holdLease(opts.sql, LEASE, holder, leaseMs))) break;
      const events = (await Promise.all(due.slice(at, at + CONCURRENCY).map(lookUp))).flat();
      looked += Math.min(CONCURRENCY, due.length - at);
      if (events.length > 0) {
        log.info({ warnings: events.map((e) => ({ monitor: e.subject.id, threshold: e.data.threshold_days })) }, 'domain expiry warnings');
        await opts.outbox?.publish(events).catch((err: unknown) => log.warn({ err }, 'domain expiry warnings left to the outbox relay'));
      }
    }
    return looked;
  };

  // Passes run one after another: runNow waits for the one under way, then runs its own.
  let chain: Promise<unknown> = Promise.resolve();
  const runNow = (): Promise<number> => {
    const next = chain.then(pass);
    chain = next.catch(() => undefined);
    return next;
  };
  const background = () => void runNow().catch((err: unknown) => log.warn({ err }, 'domain expiry pass failed; trying again'));
  const timer = setInterval(background, opts.everyMs ?? 60_000);
  timer.unref();
  background();

  return {
    runNow,
    async stop() {
      clearInterval(timer);
      await chain;
      await releaseLease(opts.sql, LEASE, holder).catch(() => undefined);
      await client.close();
    },
  };
}
