import { seal } from '../../../shared/src/crypto.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../platform/db/sql.ts';
import * as repo from './repo.ts';
import { moveIntoBasicAuth } from './url-credentials.ts';

/**
 * Monitors stored before credentials were split off their URL on write get the same treatment
 * (moveIntoBasicAuth), so the database holds the password sealed only. Idempotent: one
 * conditional update per monitor, so processes starting together change each row once.
 */
export async function moveStoredUrlCredentials(sql: Sql, key: Buffer, log: Logger): Promise<number> {
  const rows = await repo.monitorsWithUrlCredentials(sql);
  let moved = 0;
  for (const r of rows) {
    const m = moveIntoBasicAuth(r, (password) => seal(password, key));
    if (m === r) continue;
    if (m.basic_auth_username?.includes('\u0000')) {
      log.warn({ monitorId: r.id }, 'monitor URL credentials not moved: the username holds a NUL character; edit the monitor');
      continue;
    }
    if (await repo.replaceUrlCredentials(sql, r.id, r.url, m)) moved++;
  }
  if (moved > 0) log.info({ monitors: moved }, 'credentials moved out of monitor URLs into sealed basic auth');
  return moved;
}
