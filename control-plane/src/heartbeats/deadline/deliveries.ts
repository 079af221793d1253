import type { JsMsg } from '@nats-io/jetstream';

/**
 * Deliveries of pings by stream sequence. A delivery that comes again while the first is still
 * being worked on (its ack wait ran out) joins it instead of queueing a second step, and every
 * delivery of the ping is answered together.
 */
export interface Deliveries {
  /** False when the ping is held already (the delivery joined it). */
  hold(msg: JsMsg, partition: number): boolean;
  /** Pings of the partition held now (delivered, not yet answered). */
  heldIn(partition: number): number;
  /** How often the ping was delivered, by the first delivery held. */
  attempts(seq: number): number;
  /** Answers every delivery of the ping (ack, nak, term) and forgets it. */
  settle(seq: number, how: (m: JsMsg) => void): void;
}

export function createDeliveries(): Deliveries {
  const held = new Map<number, { msgs: JsMsg[]; partition: number }>();
  const perPartition = new Map<number, number>();
  return {
    hold(msg, partition) {
      const seen = held.get(msg.seq);
      if (seen) {
        seen.msgs.push(msg);
        return false;
      }
      held.set(msg.seq, { msgs: [msg], partition });
      perPartition.set(partition, (perPartition.get(partition) ?? 0) + 1);
      return true;
    },
    heldIn: (partition) => perPartition.get(partition) ?? 0,
    attempts: (seq) => held.get(seq)?.msgs[0]?.info.deliveryCount ?? 1,
    settle(seq, how) {
      const entry = held.get(seq);
      if (!entry) return;
      perPartition.set(entry.partition, perPartition.get(entry.partition)! - 1);
      for (const m of entry.msgs) {
        try {
          how(m);
        } catch {
          // NATS away: an unanswered delivery comes back after the ack wait.
        }
      }
      held.delete(seq);
    },
  };
}
