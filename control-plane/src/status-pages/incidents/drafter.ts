import { DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import type { Names } from '../../../../shared/src/subjects.ts';
import { coverage } from '../../maintenance/service.ts';
import { maintenanceUntil } from '../../maintenance/schedule.ts';
import type postgres from 'postgres';
import type { Sql } from '../../platform/db/sql.ts';
import type { IncidentImpact } from '../overall.ts';
import { startConsumer } from '../../platform/nats/consumer.ts';
import * as drafts from './drafts-repo.ts';
import * as repo from './repo.ts';
import { noticeIncident, noticeMaintenance } from '../subscribers/notices.ts';
import { draftImpact, draftTexts, onOutageEnd, onOutageStart, outageOf, type Outage } from './rules.ts';

export const DRAFTER_CONSUMER = 'status-page-drafts';

export interface DraftOutcome {
  /** Incidents drafted (one per outage per page that shows its subject). */
  drafted: number;
  /** Incidents resolved by their outage's end. */
  resolved: number;
  /** Incidents a person speaks for, told that their outage ended (a resolved update is suggested). */
  suggested: number;
}

const isMissingRow = (err: unknown) => (err as { code?: unknown } | null)?.code === '23503';

/**
 * Drafts the outage's incident on one page, unless it was drafted there before. In a savepoint: a
 * monitor or heartbeat deleted since its event (a foreign key refuses it) has nothing to draft,
 * and must not hold back the rest of the batch.
 */
async function draftOn(tx: postgres.TransactionSql, page: drafts.ShowingPage, o: Outage, impact: IncidentImpact): Promise<boolean> {
  const began = o.started_at!;
  try {
    return await tx.savepoint(async (sp) => {
      if (!(await drafts.claimDraft(sp, page.id, o.key))) return false;
      // A flap: the same subject's incident, resolved on its own minutes ago, goes on instead.
      const previous = await drafts.previousDraft(sp, page.id, o.subject);
      if (previous && onOutageStart(previous, began) === 'reopen') {
        await drafts.followOutage(sp, previous.id, o.key);
        await repo.insertUpdate(sp, previous.id, {
          status: 'investigating',
          message: draftTexts(page.display_name ?? o.subject.name).again,
          at: began,
          posted_by: null,
        });
        await repo.moveStatus(sp, previous.id, 'investigating', began);
        await drafts.linkDraft(sp, page.id, o.key, previous.id);
        await noticeIncident(sp, page.id, previous.id);
        return true;
      }
      const texts = draftTexts(page.display_name ?? o.subject.name);
      const id = await repo.insertIncident(
        sp,
        page.id,
        {
          title: texts.title,
          impact,
          status: 'investigating',
          published_at: page.auto_publish_incidents ? began : null,
          published_by: null,
          resolved_at: null,
          source: {
            monitor_id: o.subject.type === 'monitor' ? o.subject.id : null,
            heartbeat_id: o.subject.type === 'heartbeat' ? o.subject.id : null,
            key: o.key,
            ended_at: null,
          },
        },
        began,
      );
      await repo.insertUpdate(sp, id, { status: 'investigating', message: texts.opening, at: began, posted_by: null });
      await repo.replaceComponents(sp, id, [o.subject]);
      await drafts.linkDraft(sp, page.id, o.key, id);
      await noticeIncident(sp, page.id, id);
      return true;
    });
  } catch (err) {
    if (isMissingRow(err)) return false;
    throw err;
  }
}

/**
 * What these events do to status page incidents, in the caller's transaction (docs/status-pages.md,
 * "Drafts from outages"; ADR 0038). A monitor's or heartbeat's down drafts one incident on every
 * page showing it (unless maintenance covered it when the outage began); its up resolves the
 * drafts, or records the end on an incident a person speaks for. Decided by the events' own
 * instants, and idempotent: an outage is drafted once per page (even after its incident is
 * deleted) and its end acted on once, whatever is delivered again, and in whichever order the
 * start and the end are read.
 */
export async function applyOutageEvents(tx: postgres.TransactionSql, events: readonly DomainEvent[]): Promise<DraftOutcome> {
  const out: DraftOutcome = { drafted: 0, resolved: 0, suggested: 0 };
  const outages = events.map(outageOf).filter((o): o is Outage => o !== null);
  if (outages.length === 0) return out;
  const saved = await drafts.recordOutages(tx, outages);
  const names = new Map(outages.map((o) => [o.key, o.subject.name]));

  const starts = [...new Map(outages.filter((o) => o.edge === 'start').map((o) => [o.key, o])).values()];
  if (starts.length > 0) {
    const cov = await coverage(tx, [...new Set(starts.map((o) => o.project_id))]);
    const showing = await drafts.pagesShowingEach(tx, starts);
    for (const o of starts) {
      const inMaintenance = maintenanceUntil(cov.covering(o.project_id, o.subject), Date.parse(o.started_at!)) !== null;
      const impact = draftImpact(
        o.subject.type === 'monitor'
          ? { type: 'monitor', status: 2, in_maintenance: inMaintenance }
          : { type: 'heartbeat', status: 'down', in_maintenance: inMaintenance },
      );
      if (impact === null) continue;
      for (const page of showing.get(`${o.subject.type}:${o.subject.id}`) ?? []) {
        if (await draftOn(tx, page, o, impact)) out.drafted++;
      }
    }
  }

  // Ends: of this batch, and those read before their start (an incident just drafted from a start
  // whose end is already recorded is resolved at once).
  const ended = [...saved.values()].filter((r) => r.ended_at !== null);
  for (const i of await drafts.incidentsAwaitingEnd(
    tx,
    ended.map((r) => r.key),
  )) {
    const endedAt = saved.get(i.source_key)!.ended_at!;
    if (!(await drafts.markEnded(tx, i.id, endedAt))) continue;
    const decision = onOutageEnd({
      status: i.status,
      published: i.published_at !== null,
      published_by_person: i.published_by !== null,
      person_posted: i.person_posted,
    });
    if (decision === 'resolve') {
      const name = i.display_name ?? names.get(i.source_key) ?? 'The service';
      await repo.insertUpdate(tx, i.id, { status: 'resolved', message: draftTexts(name).resolved, at: endedAt, posted_by: null });
      await repo.moveStatus(tx, i.id, 'resolved', endedAt);
      await noticeIncident(tx, i.status_page_id, i.id);
      out.resolved++;
    } else if (decision === 'suggest') out.suggested++;
  }
  return out;
}

/** A value Postgres refused (SQLSTATE class 22): the same event would fail again, unlike a lost connection. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

export interface Drafter {
  stats(): DraftOutcome & { events: number; notices: number };
  stop(): Promise<void>;
}

/**
 * The drafter: a durable consumer of EVENTS (through the consumer kit), one for every process of
 * the notify role. Each batch of events is applied in one transaction and acknowledged after it
 * committed; a failed batch is handed back and applied again later, which changes nothing it
 * applied before. It starts at the stream's end the first time: outages from before it existed
 * are not drafted.
 */
export async function startIncidentDrafter(opts: { sql: Sql; nc: NatsConnection; names: Names; log: Logger }): Promise<Drafter> {
  const log = opts.log.child({ component: 'status-page-drafter' });
  const counts = { drafted: 0, resolved: 0, suggested: 0, events: 0, notices: 0 };
  const consumer = await startConsumer({
    nc: opts.nc,
    log,
    stream: opts.names.streams.events,
    config: {
      durable_name: DRAFTER_CONSUMER,
      filter_subject: opts.names.subjects.events,
      deliver_policy: DeliverPolicy.New,
      // A batch is applied in milliseconds; after a crash, what it held comes back this soon.
      ack_wait: nanos(10_000),
      max_ack_pending: 2_000,
    },
    schema: DomainEvent,
    noun: 'event',
    pull: { kind: 'continuous', maxMessages: 500 },
    handler: {
      kind: 'batches',
      batchSize: 200,
      lingerMs: 50,
      concurrency: 1,
      refused: isDataError,
      async commit(events) {
        const maintenance = events.some((e) => e.kind === 'maintenance.started' || e.kind === 'maintenance.ended');
        const { notices, ...outcome } =
          events.some((e) => outageOf(e) !== null) || maintenance
            ? await opts.sql.begin(async (tx) => ({
                ...(await applyOutageEvents(tx, events)),
                notices: maintenance ? await noticeMaintenance(tx, events) : 0,
              }))
            : { drafted: 0, resolved: 0, suggested: 0, notices: 0 };
        counts.notices += notices;
        counts.events += events.length;
        counts.drafted += outcome.drafted;
        counts.resolved += outcome.resolved;
        counts.suggested += outcome.suggested;
        if (outcome.drafted + outcome.resolved + outcome.suggested > 0) log.info(outcome, 'status page incidents drafted or resolved');
      },
    },
  });
  log.info('status page drafter started');
  return {
    stats: () => ({ ...counts }),
    async stop() {
      await consumer.stop();
      log.info('status page drafter stopped');
    },
  };
}
