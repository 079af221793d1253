import { createHash } from 'node:crypto';

/**
 * The PINGS partition of a heartbeat: the first 32 bits of md5(id), as an unsigned integer,
 * modulo the partition count. md5 because Postgres has it built in: a deadline process selects
 * the heartbeats of its partitions with the same expression (control-plane/src/heartbeats/deadline/repo.ts).
 * Ids are lower-cased first, as Postgres prints them.
 */
export function pingPartition(heartbeatId: string, partitions: number): number {
  return createHash('md5').update(heartbeatId.toLowerCase()).digest().readUInt32BE(0) % partitions;
}
