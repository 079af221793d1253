import type { Principal } from '../../accounts/bearer.ts';
import { notFound } from '../../platform/errors.ts';
import type { ApiContext } from '../../platform/http/context.ts';
import type { PageQuery } from '../../platform/http/pagination.ts';
import { formatTimestamp } from '../../platform/http/time.ts';
import * as repo from './repo.ts';
import type { PingLogEntry } from './schemas.ts';

export async function listPings(
  ctx: ApiContext,
  p: Principal,
  heartbeatId: string,
  page: PageQuery,
): Promise<{ items: PingLogEntry[]; total: number }> {
  if (!(await repo.heartbeatVisible(ctx.sql, heartbeatId, [...p.projectIds]))) throw notFound();
  const { rows, total } = await repo.listPings(ctx.sql, heartbeatId, page);
  return { items: rows.map((r) => ({ ...r, received_at: formatTimestamp(r.received_at) })), total };
}

export { PING_LOG_SIZE } from './repo.ts';
