import type { Assignment } from '../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { rendezvousOwner } from '../peers/rendezvous.ts';
import type { Scheduler } from '../schedule/scheduler.ts';
import { firstCheckAt } from './first-check.ts';

export type OwnershipOptions = {
  self: string;
  /** Scheduler ids are assignment keys; the phase seed is the monitor id, the same in every region. */
  scheduler: Pick<Scheduler, 'add' | 'remove' | 'has' | 'size' | 'runOnce'>;
  intervalMs: (a: Assignment) => number;
  log: Logger;
  now: () => number;
  /** When the agent started: only changes made since are checked at once (first-check.ts). */
  since: number;
};

export type Ownership = {
  put(key: string, assignment: Assignment): void;
  delete(key: string): void;
  /** The live agents of the region changed. */
  setMembers(members: readonly string[]): void;
  /** The current assignment under key while this agent owns it. */
  owned(key: string): Assignment | undefined;
  stats(): { assigned: number; owned: number };
};

/**
 * Keeps the scheduler holding exactly the assignments this agent wins by rendezvous hashing
 * among the live agents. Runs read the assignment at run time, so a new url or method applies
 * from the next slot; a new interval moves the slot grid at once. A change the owner hears of
 * (a new, re-activated or edited monitor) also gets one check at once, off the grid; a monitor
 * won when the live agents change gets none, its previous owner had it.
 */
export function createOwnership(opts: OwnershipOptions): Ownership {
  const assignments = new Map<string, Assignment>();
  let members: readonly string[] = [opts.self];

  function place(key: string, a: Assignment): 'gained' | 'lost' | 'same' {
    const mine = rendezvousOwner(a.monitor_id, members) === opts.self;
    const had = opts.scheduler.has(key);
    if (mine) opts.scheduler.add(key, opts.intervalMs(a), a.monitor_id);
    else if (had) opts.scheduler.remove(key);
    return mine === had ? 'same' : mine ? 'gained' : 'lost';
  }

  return {
    put(key, assignment) {
      const held = assignments.get(key);
      assignments.set(key, assignment);
      place(key, assignment);
      if (!opts.scheduler.has(key)) return;
      const at = firstCheckAt({
        changedAt: assignment.changed_at,
        heldChangedAt: held?.changed_at,
        since: opts.since,
        now: opts.now(),
        intervalMs: opts.intervalMs(assignment),
      });
      if (at !== undefined) opts.scheduler.runOnce(key, at);
    },
    delete(key) {
      assignments.delete(key);
      opts.scheduler.remove(key);
    },
    setMembers(next) {
      members = next.includes(opts.self) ? [...next] : [...next, opts.self];
      let gained = 0;
      let lost = 0;
      for (const [key, a] of assignments) {
        const moved = place(key, a);
        if (moved === 'gained') gained++;
        else if (moved === 'lost') lost++;
      }
      if (gained + lost > 0) {
        opts.log.info(
          { agents: members.length, gained, lost, owned: opts.scheduler.size, assigned: assignments.size },
          'monitors shared anew',
        );
      }
    },
    owned: (key) => (opts.scheduler.has(key) ? assignments.get(key) : undefined),
    stats: () => ({ assigned: assignments.size, owned: opts.scheduler.size }),
  };
}
