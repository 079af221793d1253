import type { CheckResult } from '../../../../shared/src/contracts/monitoring.ts';
import { arrayElement } from '../../platform/db/sql.ts';

/**
 * A batch of results as one Postgres array literal per column, for `unnest($1::uuid[], ...)`.
 * Postgres parses array literals several times faster than the same rows as JSON, and building
 * them here costs about what JSON.stringify would.
 */
export interface ResultColumns {
  monitorId: string;
  scheduledAt: string;
  region: string;
  checkedAt: string;
  agentId: string;
  ok: string;
  statusCode: string;
  dns: string;
  connect: string;
  tls: string;
  ttfb: string;
  total: string;
  errorClass: string;
  errorMessage: string;
  attempts: string;
  degraded: string;
  /** Assertion outcomes and details as JSON; NULL for the plain checks that have neither. */
  extra: string;
}

/** Numbers, booleans and values already safe unquoted (uuids, ISO timestamps) need no quotes. */
function plain(v: number | boolean | null): string {
  return v === null ? 'NULL' : String(v);
}

export function columnsOf(rows: readonly CheckResult[]): ResultColumns {
  const n = rows.length;
  const monitorId = new Array<string>(n);
  const scheduledAt = new Array<string>(n);
  const region = new Array<string>(n);
  const checkedAt = new Array<string>(n);
  const agentId = new Array<string>(n);
  const ok = new Array<string>(n);
  const statusCode = new Array<string>(n);
  const dns = new Array<string>(n);
  const connect = new Array<string>(n);
  const tls = new Array<string>(n);
  const ttfb = new Array<string>(n);
  const total = new Array<string>(n);
  const errorClass = new Array<string>(n);
  const errorMessage = new Array<string>(n);
  const attempts = new Array<string>(n);
  const degraded = new Array<string>(n);
  const extra = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    monitorId[i] = r.monitor_id;
    scheduledAt[i] = r.scheduled_at;
    region[i] = arrayElement(r.region);
    checkedAt[i] = r.checked_at;
    agentId[i] = arrayElement(r.agent_id);
    ok[i] = r.ok ? 't' : 'f';
    statusCode[i] = plain(r.status_code);
    dns[i] = plain(r.timings.dns);
    connect[i] = plain(r.timings.connect);
    tls[i] = plain(r.timings.tls);
    ttfb[i] = plain(r.timings.ttfb);
    total[i] = plain(r.timings.total);
    errorClass[i] = r.error ? arrayElement(r.error.class) : 'NULL';
    errorMessage[i] = r.error ? arrayElement(r.error.message) : 'NULL';
    attempts[i] = plain(r.attempts);
    degraded[i] = r.degraded ? 't' : 'NULL';
    extra[i] = r.assertions || r.details ? arrayElement(JSON.stringify({ assertions: r.assertions, details: r.details })) : 'NULL';
  }
  const lit = (xs: string[]) => `{${xs.join(',')}}`;
  return {
    monitorId: lit(monitorId),
    scheduledAt: lit(scheduledAt),
    region: lit(region),
    checkedAt: lit(checkedAt),
    agentId: lit(agentId),
    ok: lit(ok),
    statusCode: lit(statusCode),
    dns: lit(dns),
    connect: lit(connect),
    tls: lit(tls),
    ttfb: lit(ttfb),
    total: lit(total),
    errorClass: lit(errorClass),
    errorMessage: lit(errorMessage),
    attempts: lit(attempts),
    degraded: lit(degraded),
    extra: lit(extra),
  };
}

const realMax = 3.4e38;

/** False for a result a column cannot hold (a status code beyond smallint, a timing beyond real). */
export function storable(r: CheckResult): boolean {
  const t = r.timings;
  return (
    (r.status_code === null || (r.status_code >= 0 && r.status_code <= 32_767)) &&
    t.dns < realMax &&
    t.connect < realMax &&
    t.tls < realMax &&
    t.ttfb < realMax &&
    t.total < realMax
  );
}
