import type { Principal } from '../../accounts/bearer.ts';
import { notFound } from '../../platform/errors.ts';
import type { ApiContext } from '../../platform/http/context.ts';
import type { PageQuery } from '../../platform/http/pagination.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import * as repo from './repo.ts';
import type { PingLogEntry } from './schemas.ts';

/** A logged ping as the API shows it. */
export function pingLogEntry({ duration_ms, ...r }: repo.PingRecord): PingLogEntry {
  return { ...r, received_at: formatTimestamp(r.received_at), duration_seconds: duration_ms === null ? null : Number(duration_ms) / 1000 };
}

export async function listPings(
  ctx: ApiContext,
  p: Principal,
  heartbeatId: string,
  page: PageQuery,
): Promise<{ items: PingLogEntry[]; total: number }> {
  if (!(await repo.heartbeatVisible(ctx.sql, heartbeatId, [...p.projectIds]))) throw notFound();
  const { rows, total } = await repo.listPings(ctx.sql, heartbeatId, page);
  return { items: rows.map(pingLogEntry), total };
}

export { PING_LOG_SIZE } from './repo.ts';
