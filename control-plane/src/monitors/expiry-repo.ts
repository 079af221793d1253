import type { CertificateInfo } from '../../../shared/src/contracts/checks.ts';
import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { nameUuid } from '../../../shared/src/name-uuid.ts';
import type { Db, Sql } from '../platform/db/sql.ts';
import { recordEvent } from '../platform/outbox.ts';
import { thresholdsCovered } from './expiry-warnings.ts';
import type { EventMonitor } from './incidents/rules.ts';
import { withoutUrlCredentials } from './url-credentials.ts';

/** A domain's registration as a warning reports it. */
export interface ExpiringDomain {
  name: string;
  expires_at: string;
  registrar: string | null;
  /** Days left when it was looked up, with a fraction. */
  days_left: number;
}

/** A warning an expiry rule found due (expiry-warnings.ts), with what it is about. */
export type DueWarning = {
  monitor: EventMonitor;
  threshold: number;
  /** The monitor's thresholds: the warning stands for its own and every less urgent one. */
  thresholdsDays: number[];
  /** The instant it was decided at: the check's, or the lookup's. */
  at: Date;
} & ({ kind: 'certificate'; certificate: CertificateInfo } | { kind: 'domain'; domain: ExpiringDomain });

/** A domain's registration until a date, as the warnings' key names it: a renewal is a new subject. */
export function domainSubject(name: string, expiresAt: string): string {
  return `${name}@${expiresAt}`;
}

/** What runs out, as the warnings' key names it: a certificate by its fingerprint, a domain with its date. */
function subjectOf(w: DueWarning): string {
  return w.kind === 'certificate' ? w.certificate.fingerprint256 : domainSubject(w.domain.name, w.domain.expires_at);
}

/**
 * Records due warnings with their events, in the caller's transaction. Each warning marks its
 * threshold and every less urgent one as sent, under keys unique per monitor, subject and
 * threshold; its event is recorded only when its own key is new, so a decision taken again (a
 * replayed result, a second lookup, two processes at once) sends nothing more.
 */
export async function recordWarnings(tx: Db, due: readonly DueWarning[]): Promise<DomainEvent[]> {
  if (due.length === 0) return [];
  const rows = due.flatMap((w) =>
    thresholdsCovered(w.threshold, w.thresholdsDays).map((t) => ({
      monitor_id: w.monitor.id,
      kind: w.kind,
      subject: subjectOf(w),
      threshold_days: t,
      warned_at: w.at.toISOString(),
    })),
  );
  const inserted = await tx<{ monitor_id: string; kind: string; subject: string; threshold_days: number }[]>`
    insert into expiry_warnings ${tx(rows)} on conflict do nothing
    returning monitor_id, kind, subject, threshold_days`;
  const fresh = new Set(inserted.map((r) => `${r.monitor_id} ${r.kind} ${r.subject} ${r.threshold_days}`));
  const events: DomainEvent[] = [];
  for (const w of due) {
    if (fresh.has(`${w.monitor.id} ${w.kind} ${subjectOf(w)} ${w.threshold}`)) events.push(await recordEvent(tx, expiryEvent(w)));
  }
  return events;
}

/** monitor.certificate_expiring or monitor.domain_expiring; its id follows from its key, so it is one event wherever it is decided. */
function expiryEvent(w: DueWarning): DomainEvent {
  const base = {
    id: nameUuid(`uptime-expiry:${w.monitor.id}:${w.kind}:${subjectOf(w)}:${w.threshold}`),
    occurred_at: w.at.toISOString(),
    project_id: w.monitor.project_id,
    subject: { type: 'monitor' as const, id: w.monitor.id, name: w.monitor.name },
  };
  // Events reach integrations and outside consumers: never a password a stored URL still holds.
  const url = withoutUrlCredentials(w.monitor.url);
  if (w.kind === 'domain') {
    return { ...base, kind: 'monitor.domain_expiring', data: { url, domain: w.domain, threshold_days: w.threshold } };
  }
  const { subject, issuer, sans, valid_to, days_left } = w.certificate;
  return {
    ...base,
    kind: 'monitor.certificate_expiring',
    data: { url, certificate: { subject, issuer, sans, valid_to, days_left }, threshold_days: w.threshold },
  };
}

/**
 * Deletes warnings of certificates and domains long expired: a warning is sent at most its
 * threshold's days before the expiry, so once that many days and the retention have passed since,
 * what it warned of has expired and its row can no longer stop a warning being sent twice.
 */
export async function pruneExpiryWarnings(sql: Sql, cutoff: string, limit: number): Promise<number> {
  const { count } = await sql`
    delete from expiry_warnings where ctid = any(array(
      select ctid from expiry_warnings where warned_at + threshold_days * interval '1 day' < ${cutoff} limit ${limit}))`;
  return count;
}
