import type { Logger } from '../../../shared/src/logger.ts';
import type { Sql } from '../db/sql.ts';

/**
 * Deletes raw results older than the retention, a bounded chunk at a time so it never holds long
 * locks; hourly rollups stay, so long-range charts outlive the raw rows.
 */
export function startRetention(opts: { sql: Sql; log: Logger; days: number; everyMs?: number; now?: () => Date }): { run(): Promise<number>; stop(): void } {
  const now = opts.now ?? (() => new Date());
  const run = async () => {
    const cutoff = new Date(now().getTime() - opts.days * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const rows = await opts.sql`
        delete from check_results where ctid = any(array(
          select ctid from check_results where scheduled_at < ${cutoff} limit 10000))
        returning 1`;
      total += rows.length;
      if (rows.length < 10_000) break;
    }
    if (total > 0) opts.log.info({ deleted: total, cutoff }, 'old check results deleted');
    return total;
  };
  const timer = setInterval(() => void run().catch((err: unknown) => opts.log.warn({ err }, 'retention failed')), opts.everyMs ?? 3_600_000);
  timer.unref();
  return { run, stop: () => clearInterval(timer) };
}
