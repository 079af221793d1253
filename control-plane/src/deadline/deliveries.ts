import type { JsMsg } from '@nats-io/jetstream';

/**
 * Deliveries of pings by stream sequence. A delivery that comes again while the first is still
 * being worked on (its ack wait ran out) joins it instead of queueing a second step, and every
 * delivery of the ping is answered together.
 */
export interface Deliveries {
  /** False when the ping is held already (the delivery joined it). */
  hold(msg: JsMsg): boolean;
  /** How often the ping was delivered, by the first delivery held. */
  attempts(seq: number): number;
  /** Answers every delivery of the ping (ack, nak, term) and forgets it. */
  settle(seq: number, how: (m: JsMsg) => void): void;
}

export function createDeliveries(): Deliveries {
  const held = new Map<number, JsMsg[]>();
  return {
    hold(msg) {
      const seen = held.get(msg.seq);
      if (seen) {
        seen.push(msg);
        return false;
      }
      held.set(msg.seq, [msg]);
      return true;
    },
    attempts: (seq) => held.get(seq)?.[0]?.info.deliveryCount ?? 1,
    settle(seq, how) {
      for (const m of held.get(seq) ?? []) {
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
