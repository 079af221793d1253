import type { Ownership } from '../assignments/ownership.ts';
import type { Presence } from '../peers/presence.ts';
import type { ResultPublisher } from '../results/publisher.ts';
import type { Scheduler, SchedulerStats } from '../schedule/scheduler.ts';
import type { SlotRuns } from './slot-runs.ts';

export interface AgentStats {
  /** Slots checked (a re-check belongs to its slot). */
  checks: number;
  /** Slots whose failure was re-checked. */
  rechecks: number;
  published: number;
  duplicates: number;
  buffered: number;
  dropped: number;
  publishFailures: number;
  assigned: number;
  owned: number;
  /** Live agents of the region, this one included. */
  agents: number;
  scheduler: SchedulerStats;
}

/** One figure set read from every part, for RunningAgent.stats(). */
export function agentStats(from: {
  slots: Pick<SlotRuns, 'counts'>;
  publisher: Pick<ResultPublisher, 'stats'>;
  ownership: Pick<Ownership, 'stats'>;
  presence: Pick<Presence, 'members'>;
  scheduler: Pick<Scheduler, 'stats'>;
}): AgentStats {
  const p = from.publisher.stats();
  return {
    ...from.slots.counts,
    published: p.published,
    duplicates: p.duplicates,
    buffered: p.buffered,
    dropped: p.dropped,
    publishFailures: p.failures,
    ...from.ownership.stats(),
    agents: from.presence.members().length,
    scheduler: from.scheduler.stats(),
  };
}
