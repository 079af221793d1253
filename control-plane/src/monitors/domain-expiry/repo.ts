import { arrayLiteral, type Db, type Sql } from '../../platform/db/sql.ts';
import type { EventMonitor } from '../incidents/rules.ts';
import { monitorDomain } from './rules.ts';

/** A domain's row as the job reads it. */
export interface DomainRow {
  domain: string;
  /** Epoch milliseconds; null when no date is known. */
  expires_at: number | null;
  registrar: string | null;
}

/** An active monitor using a domain, with what its warnings need. */
export interface DomainUser extends EventMonitor {
  thresholds: number[];
  /** Thresholds already warned at for the domain's current expiry date. */
  sent: number[];
}

/** What one lookup found, to store. */
export interface LookupOutcome {
  lookedUpAt: Date;
  ok: boolean;
  /** Undefined: the lookup failed, the last date known stays. */
  expiresAt?: Date | null;
  registrar?: string | null;
  error: string | null;
  nextLookupAt: Date;
}

/**
 * Takes or renews the lease `name` for `holder` for `ttlMs` (Postgres's clock); whether it holds it.
 * A lease another process holds is taken over only once it has run out.
 */
export async function holdLease(sql: Sql, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const rows = await sql`
    insert into leases as l (name, holder, expires_at) values (${name}, ${holder}, now() + ${ttlMs} * interval '1 millisecond')
    on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
      where l.holder = excluded.holder or l.expires_at < now()
    returning name`;
  return rows.length > 0;
}

/** Gives the lease up, so another process may take it at once. */
export async function releaseLease(sql: Sql, name: string, holder: string): Promise<void> {
  await sql`delete from leases where name = ${name} and holder = ${holder}`;
}

/**
 * Makes sure the domain of an active monitor has a row, due for a lookup at `now` when new (a
 * domain already known keeps its schedule: monitors share its lookup). In the monitor's write.
 */
export async function ensureDomains(db: Db, domains: readonly string[], now: Date): Promise<void> {
  const named = [...new Set(domains.filter((d) => d !== ''))];
  if (named.length === 0) return;
  await db`
    insert into domain_expiry (domain, next_lookup_at)
    select d, ${now.toISOString()}::timestamptz from unnest(${arrayLiteral(named)}::text[]) as d
    on conflict (domain) do nothing`;
}

/**
 * Works out the registrable domain of up to `limit` monitors stored without one (written before
 * the column, or by a writer that does not set it) and gives their domains a row; how many.
 */
export async function fillMonitorDomains(sql: Sql, limit: number, now: Date): Promise<number> {
  const rows = await sql<{ id: string; url: string; active: boolean }[]>`
    select id, url, active from monitors where registrable_domain is null limit ${limit}`;
  if (rows.length === 0) return 0;
  const domains = rows.map((r) => monitorDomain(r.url));
  await sql.begin(async (tx) => {
    await tx`
      update monitors m set registrable_domain = u.domain
      from unnest(${arrayLiteral(rows.map((r) => r.id))}::uuid[], ${arrayLiteral(domains)}::text[]) as u(id, domain)
      where m.id = u.id and m.registrable_domain is null`;
    await ensureDomains(
      tx,
      domains.filter((_, i) => rows[i]!.active),
      now,
    );
  });
  return rows.length;
}

/** Up to `limit` domains whose next lookup has come, the longest waiting first. */
export function dueDomains(sql: Sql, now: Date, limit: number) {
  return sql<DomainRow[]>`
    select domain, (extract(epoch from expires_at) * 1000)::float8 as expires_at, registrar from domain_expiry
    where next_lookup_at <= ${now.toISOString()}::timestamptz order by next_lookup_at limit ${limit}`;
}

/** Whether an active monitor uses the domain: a lookup is worth a request. */
export async function domainInUse(db: Db, domain: string): Promise<boolean> {
  const [row] = await db<{ used: boolean }[]>`
    select exists (select 1 from monitors where registrable_domain = ${domain} and active) as used`;
  return row!.used;
}

/** The active monitors using a domain, each with the warnings it has had for this expiry date (`subject`). */
export function domainUsers(db: Db, domain: string, subject: string) {
  return db<DomainUser[]>`
    select m.id, m.project_id, m.name, m.url, m.domain_expiry_days as thresholds,
      array(select w.threshold_days from expiry_warnings w
        where w.monitor_id = m.id and w.kind = 'domain' and w.subject = ${subject}) as sent
    from monitors m where m.registrable_domain = ${domain} and m.active`;
}

/**
 * Puts off the lookup of a domain no active monitor uses now: its row stays (a monitor resumed
 * with it finds its last answer) and costs no request until one does.
 */
export async function postponeLookup(db: Db, domain: string, until: Date): Promise<void> {
  await db`update domain_expiry set next_lookup_at = ${until.toISOString()} where domain = ${domain}`;
}

/** Stores a lookup's outcome; a failed one keeps the last date and registrar known. */
export async function saveLookup(db: Db, domain: string, o: LookupOutcome): Promise<void> {
  const found = o.expiresAt !== undefined;
  await db`
    update domain_expiry set
      expires_at = case when ${found} then ${o.expiresAt?.toISOString() ?? null}::timestamptz else expires_at end,
      registrar = case when ${found} then ${o.registrar ?? null} else registrar end,
      looked_up_at = ${o.lookedUpAt.toISOString()}, ok = ${o.ok}, error = ${o.error},
      next_lookup_at = ${o.nextLookupAt.toISOString()}
    where domain = ${domain}`;
}
