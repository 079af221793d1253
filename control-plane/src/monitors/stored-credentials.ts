import { seal } from '../../../shared/src/crypto.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';
import { moveIntoBasicAuth, type BasicAuthColumns } from './url-credentials.ts';

/**
 * Monitors stored before credentials were split off their URL on write get the same treatment
 * (moveIntoBasicAuth), so the database holds the password sealed only. Idempotent: one
 * conditional update per monitor, so processes starting together change each row once.
 */
export async function moveStoredUrlCredentials(sql: Sql, key: Buffer, log: Logger): Promise<number> {
  const rows = await sql<(BasicAuthColumns & { id: string })[]>`
    select id, url, basic_auth_username, basic_auth_password_sealed from monitors where url like '%@%'`;
  let moved = 0;
  for (const r of rows) {
    const m = moveIntoBasicAuth(r, (password) => seal(password, key));
    if (m === r) continue;
    if (m.basic_auth_username?.includes('\u0000')) {
      log.warn({ monitorId: r.id }, 'monitor URL credentials not moved: the username holds a NUL character; edit the monitor');
      continue;
    }
    const updated = await sql`
      update monitors set url = ${m.url}, basic_auth_username = ${m.basic_auth_username},
        basic_auth_password_sealed = ${m.basic_auth_password_sealed}, updated_at = now()
      where id = ${r.id} and url = ${r.url}`;
    moved += updated.count;
  }
  if (moved > 0) log.info({ monitors: moved }, 'credentials moved out of monitor URLs into sealed basic auth');
  return moved;
}
