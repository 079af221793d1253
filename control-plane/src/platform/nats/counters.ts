/** What a consumer did, counted; several consumers of one role may share one (the deadline's partitions). */
export interface ConsumerCounters {
  /** Messages handed to the role (one at a time), or acknowledged after their batch committed. */
  handled: number;
  /** Batches committed. */
  batches: number;
  /** Messages terminated: invalid by their schema, or refused by the role's handler. */
  invalid: number;
  /** Batches handed back to be delivered again. */
  failedBatches: number;
}

export const newCounters = (): ConsumerCounters => ({ handled: 0, batches: 0, invalid: 0, failedBatches: 0 });
