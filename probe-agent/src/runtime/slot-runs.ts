import { resultMsgId, type Assignment } from '../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Metrics } from '../../../shared/src/metrics.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { MonitorCheck } from '../check/monitor-check.ts';
import type { ResultPublisher } from '../results/publisher.ts';

export type SlotRunsOptions = {
  region: string;
  names: Names;
  log: Logger;
  metrics: Metrics;
  /** The assignment under key while this agent owns it. */
  owned(key: string): Assignment | undefined;
  check: MonitorCheck;
  publisher: Pick<ResultPublisher, 'push'>;
  intervalMs(a: Assignment): number;
};

export type SlotRuns = {
  /** The scheduler's run: checks one slot (or an off-grid time) of an owned monitor and publishes the result. */
  run(key: string, scheduledAt: number, offGrid?: boolean): Promise<void>;
  /**
   * Slots before `at` stay with the peers that owned them until those see this agent. Off-grid
   * checks are not held: one owed to a change made meanwhile may be run by an old owner too, and
   * its msg id keeps one result.
   */
  holdUntil(at: number): void;
  /** Checks in flight end without a result. */
  cancel(): void;
  /** Slots checked (a re-check belongs to its slot), and those whose failure was re-checked. */
  readonly counts: { readonly checks: number; readonly rechecks: number };
};

export function createSlotRuns(opts: SlotRunsOptions): SlotRuns {
  const { region, log, metrics } = opts;
  const cancelChecks = new AbortController();
  const counts = { checks: 0, rechecks: 0 };
  let notBefore = 0;

  async function run(key: string, scheduledAt: number, offGrid = false): Promise<void> {
    const a = opts.owned(key);
    if (a === undefined || (!offGrid && scheduledAt < notBefore)) return;
    const result = await opts.check({
      assignment: a,
      scheduledAt,
      recheckPauseMs: Math.min(2_000, opts.intervalMs(a) / 4),
      signal: cancelChecks.signal,
    });
    if (result === null) return;
    counts.checks++;
    metrics.checks.inc({ region, outcome: result.ok ? 'up' : 'down' });
    metrics.checkDuration.observe({ region }, result.timings.total / 1000);
    if (result.attempts > 1) counts.rechecks++;
    log.debug({ monitorId: a.monitor_id, ok: result.ok, attempts: result.attempts, error: result.error, offGrid }, 'checked');
    opts.publisher.push({
      subject: opts.names.subjects.result(region, a.monitor_id),
      payload: JSON.stringify(result),
      msgId: resultMsgId(result),
    });
  }

  return {
    run,
    holdUntil(at) {
      notBefore = at;
    },
    cancel: () => cancelChecks.abort(),
    counts,
  };
}
