import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { Db, Sql } from '../../platform/db/sql.ts';
import { recordEvent } from '../../platform/outbox.ts';
import type { RegionRecord, RegionState, DegradedReason } from './health.ts';
import { regionEvent, type RegionDetail } from './events.ts';

export interface StoredRegion extends RegionRecord {
  region: string;
  detail: RegionDetail;
  updated_at: number;
}

interface Row {
  region: string;
  state: RegionState;
  reason: DegradedReason | null;
  since: number;
  detail: RegionDetail;
  updated_at: number;
}

export async function loadRegions(db: Db): Promise<StoredRegion[]> {
  const rows = await db<Row[]>`
    select region, state, reason, (extract(epoch from since) * 1000)::float8 as since, detail,
      (extract(epoch from updated_at) * 1000)::float8 as updated_at
    from region_health order by region`;
  return rows;
}

/**
 * Per region: monitors with a fresh result there and in at least one other healthy-or-not
 * region, and those failing there while most other regions see them up. "Fresh" is the status
 * rule's staleness (three intervals, at least a minute), measured from `now`.
 */
export async function disagreementByRegion(db: Db, now: Date): Promise<Map<string, { compared: number; disagreeing: number }>> {
  const rows = await db<{ region: string; compared: number; disagreeing: number }[]>`
    with fresh as (
      select r.monitor_id, r.region, r.ok from monitor_regions r
      join monitors m on m.id = r.monitor_id and m.active
      where r.scheduled_at > ${now.toISOString()}::timestamptz - make_interval(secs => greatest(60, 3 * m.interval_seconds + 10))
    ), shared as (
      select monitor_id, count(*)::int as n, (count(*) filter (where ok))::int as up from fresh group by monitor_id having count(*) > 1
    )
    select f.region, count(*)::int as compared,
      (count(*) filter (where not f.ok and s.up * 2 > s.n - 1))::int as disagreeing
    from fresh f join shared s using (monitor_id)
    group by f.region`;
  return new Map(rows.map((r) => [r.region, { compared: r.compared, disagreeing: r.disagreeing }]));
}

/**
 * Writes a region's judgement. A change of state is a conditional update on the state read, so
 * of several processes judging at once one records it, with its event; the others find the row
 * changed and write nothing. Returns the event when this call recorded one.
 */
export async function saveRegion(
  sql: Sql,
  region: string,
  prev: StoredRegion | null,
  next: RegionRecord,
  change: 'degraded' | 'recovered' | null,
  detail: RegionDetail,
  now: Date,
): Promise<DomainEvent | null> {
  const ts = now.toISOString();
  const since = new Date(next.since).toISOString();
  if (!change) {
    if (!prev) {
      await sql`
        insert into region_health (region, state, reason, since, detail, updated_at)
        values (${region}, ${next.state}, ${next.reason}, ${since}, ${sql.json(detail as never)}, ${ts})
        on conflict (region) do nothing`;
    } else {
      await sql`
        update region_health set reason = ${next.reason}, detail = ${sql.json(detail as never)}, updated_at = ${ts}
        where region = ${region} and state = ${prev.state}`;
    }
    return null;
  }
  return sql.begin(async (tx) => {
    const written = prev
      ? await tx`
          update region_health set state = ${next.state}, reason = ${next.reason}, since = ${since},
            detail = ${tx.json(detail as never)}, updated_at = ${ts}
          where region = ${region} and state = ${prev.state} and since = ${new Date(prev.since).toISOString()}
          returning region`
      : await tx`
          insert into region_health (region, state, reason, since, detail, updated_at)
          values (${region}, ${next.state}, ${next.reason}, ${since}, ${tx.json(detail as never)}, ${ts})
          on conflict (region) do nothing
          returning region`;
    if (written.length === 0) return null;
    return recordEvent(tx, regionEvent(region, change, { next, prev, detail, now }));
  });
}

/** Forgets these regions (silent for a week with no fresh result anywhere, role.ts decides). */
export async function forgetRegions(db: Db, regions: readonly string[]): Promise<void> {
  if (regions.length === 0) return;
  await db`delete from region_health where region = any(${[...regions]}::text[])`;
}
