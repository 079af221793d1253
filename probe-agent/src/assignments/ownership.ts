import type { Assignment } from '../../../shared/src/contracts/monitoring.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import { rendezvousOwner } from '../peers/rendezvous.ts';
import type { Scheduler } from '../schedule/scheduler.ts';

export type OwnershipOptions = {
  self: string;
  /** Scheduler ids are assignment keys; the phase seed is the monitor id, the same in every region. */
  scheduler: Pick<Scheduler, 'add' | 'remove' | 'has' | 'size'>;
  intervalMs: (a: Assignment) => number;
  log: Logger;
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
 * from the next slot; a new interval moves the slot grid at once.
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
      assignments.set(key, assignment);
      place(key, assignment);
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
