import type { CertificateInfo } from '../../../../shared/src/contracts/checks.ts';
import type { DomainEvent } from '../../../../shared/src/contracts/events.ts';
import type { CheckResult } from '../../../../shared/src/contracts/monitoring.ts';
import { arrayLiteral, type Db } from '../../platform/db/sql.ts';
import { recordWarnings, type DueWarning } from '../expiry-repo.ts';
import { certificateDecision } from '../expiry-warnings.ts';

/** A monitor whose new results carry a certificate, with the certificate it has kept. */
interface KeptRow {
  id: string;
  project_id: string;
  name: string;
  url: string;
  thresholds: number[];
  fingerprint256: string | null;
  /** Epoch milliseconds; null with no certificate kept. */
  valid_to: number | null;
  checked_at: number | null;
  /** Thresholds already warned at for the certificate just seen. */
  sent: number[];
}

interface Seen {
  checkedAt: string;
  certificate: CertificateInfo;
}

/**
 * The certificates a batch's checks presented, for the monitors whose results were stored (a
 * redelivered batch stores none, and so does nothing here): each monitor keeps its latest
 * certificate (monitor_certificates, what the API and the dashboard show) and warns as it nears
 * its expiry (expiry-warnings.ts decides, at each check's own time). Runs in the batch's
 * transaction, after the results are written: a batch without a certificate costs nothing, one
 * with certificates a read, and a write only when a certificate changes or a warning is due.
 * Returns the events recorded.
 */
export async function recordCertificates(
  tx: Db,
  results: readonly CheckResult[],
  stored: readonly { monitor_id: string }[],
): Promise<DomainEvent[]> {
  if (!results.some((r) => r.details?.certificate)) return [];
  const latest = latestCertificates(results, new Set(stored.map((s) => s.monitor_id)));
  if (latest.size === 0) return [];
  const ids = [...latest.keys()];
  const rows = await tx<KeptRow[]>`
    select m.id, m.project_id, m.name, m.url, m.certificate_expiry_days as thresholds, c.fingerprint256,
      (extract(epoch from c.valid_to) * 1000)::float8 as valid_to, (extract(epoch from c.checked_at) * 1000)::float8 as checked_at,
      array(select w.threshold_days from expiry_warnings w
        where w.monitor_id = m.id and w.kind = 'certificate' and w.subject = x.fingerprint) as sent
    from unnest(${arrayLiteral(ids)}::uuid[], ${arrayLiteral(ids.map((id) => latest.get(id)!.certificate.fingerprint256))}::text[])
      as x(id, fingerprint)
    join monitors m on m.id = x.id
    left join monitor_certificates c on c.monitor_id = m.id`;
  const keep: { monitor_id: string; certificate: CertificateInfo; checked_at: string }[] = [];
  const due: DueWarning[] = [];
  for (const row of rows) {
    const { checkedAt, certificate } = latest.get(row.id)!;
    const decision = certificateDecision({
      stored:
        row.fingerprint256 === null
          ? null
          : { fingerprint256: row.fingerprint256, validTo: new Date(row.valid_to!), checkedAt: new Date(row.checked_at!) },
      seen: { fingerprint256: certificate.fingerprint256, validTo: new Date(certificate.valid_to), checkedAt: new Date(checkedAt) },
      thresholdsDays: row.thresholds,
      alreadySent: row.sent,
    });
    if (decision.store) keep.push({ monitor_id: row.id, certificate, checked_at: checkedAt });
    if (decision.warn !== null) {
      due.push({
        kind: 'certificate',
        monitor: { id: row.id, project_id: row.project_id, name: row.name, url: row.url },
        certificate,
        threshold: decision.warn,
        thresholdsDays: row.thresholds,
        at: new Date(checkedAt),
      });
    }
  }
  if (keep.length > 0) await keepCertificates(tx, keep);
  return recordWarnings(tx, due);
}

/** Each stored monitor's newest result with a certificate (by when the check ran). */
function latestCertificates(results: readonly CheckResult[], stored: ReadonlySet<string>): Map<string, Seen> {
  const latest = new Map<string, Seen>();
  for (const r of results) {
    const certificate = r.details?.certificate;
    // A certificate without a readable expiry cannot be dated: it is not kept.
    if (!certificate || !stored.has(r.monitor_id) || Number.isNaN(Date.parse(certificate.valid_to))) continue;
    const prev = latest.get(r.monitor_id);
    if (!prev || Date.parse(prev.checkedAt) < Date.parse(r.checked_at)) latest.set(r.monitor_id, { checkedAt: r.checked_at, certificate });
  }
  return latest;
}

/** Writes monitors' latest certificates; a certificate seen by an earlier check never replaces a later one. */
async function keepCertificates(tx: Db, rows: readonly { monitor_id: string; certificate: CertificateInfo; checked_at: string }[]) {
  // Sent as text: a parameter typed jsonb would be serialized once more by the driver.
  await tx`
    insert into monitor_certificates as c (monitor_id, certificate, fingerprint256, valid_to, checked_at)
    select x.monitor_id, x.certificate, x.certificate->>'fingerprint256', (x.certificate->>'valid_to')::timestamptz, x.checked_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as x(monitor_id uuid, certificate jsonb, checked_at timestamptz)
    on conflict (monitor_id) do update
      set certificate = excluded.certificate, fingerprint256 = excluded.fingerprint256, valid_to = excluded.valid_to,
        checked_at = excluded.checked_at
      where c.checked_at <= excluded.checked_at`;
}
