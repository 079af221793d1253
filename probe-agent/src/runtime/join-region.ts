import type { KV } from '@nats-io/kv';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Names } from '../../../shared/src/subjects.ts';
import type { Ownership } from '../assignments/ownership.ts';
import { watchAssignments, type AssignmentWatch } from '../assignments/watch.ts';
import type { Presence } from '../peers/presence.ts';
import type { SlotRuns } from './slot-runs.ts';

export type JoinRegionOptions = {
  presence: Pick<Presence, 'start' | 'peerCount'>;
  ownership: Pick<Ownership, 'put' | 'delete'>;
  slots: Pick<SlotRuns, 'holdUntil'>;
  /** KV `assignments`. */
  kv: KV;
  names: Names;
  region: string;
  log: Logger;
  /** How long a joining agent leaves slots to the peers that owned them until they see it. */
  graceMs: number;
};

/**
 * Announces the agent and reads the region's live agents before the first assignment arrives,
 * so ownership starts out shared with every peer instead of claiming the whole region.
 */
export async function joinRegion(opts: JoinRegionOptions): Promise<AssignmentWatch> {
  await opts.presence.start();
  if (opts.presence.peerCount() > 0) opts.slots.holdUntil(Date.now() + opts.graceMs);
  return watchAssignments({
    kv: opts.kv,
    names: opts.names,
    region: opts.region,
    log: opts.log,
    onPut: (key, a) => opts.ownership.put(key, a),
    onDelete: (key) => opts.ownership.delete(key),
  });
}
