export const QUEUED = 0;
export const IN_FLIGHT = 1;
export const DONE = 2;

/** `sends` numbers the attempts: only the answer to the latest one moves the item on. */
export type Item = { subject: string; payload: string; msgId: string; state: number; sends: number };

/**
 * Results in push order until acknowledged or dropped, and the cursor of the next one to send.
 * An array with a moving head: acknowledged items are skipped and cut off in bulk, not shifted.
 */
export type ResultBuffer = {
  /** Held until acknowledged, in flight included. */
  readonly buffered: number;
  readonly dropped: number;
  /** Appends; over capacity, drops the oldest unsent result: true when one was dropped. */
  push(message: { subject: string; payload: string; msgId: string }): boolean;
  /** The next queued result in push order, moving the cursor past it. */
  nextToSend(): Item | undefined;
  /** Sends start over from the oldest result held. */
  rewind(): void;
  oldestQueued(): Item | undefined;
  /** Marks an item stored; false when it already was (or was dropped). */
  complete(item: Item): boolean;
  /** Everything in flight goes back to the queue, its pending answers outdated; returns how many. */
  requeueInFlight(): number;
};

export function createResultBuffer(capacity: number): ResultBuffer {
  let items: Item[] = [];
  let head = 0;
  let next = 0;
  let buffered = 0;
  let dropped = 0;

  function compact(): void {
    while (head < items.length && items[head]!.state === DONE) head++;
    if (head > 1024 && head * 2 > items.length) {
      items = items.slice(head);
      next = Math.max(0, next - head);
      head = 0;
    }
    if (next < head) next = head;
  }

  /** Only unsent results are dropped: one in flight may already be stored. */
  function dropOldest(): boolean {
    for (let i = head; i < items.length; i++) {
      const item = items[i]!;
      if (item.state !== QUEUED) continue;
      item.state = DONE;
      buffered--;
      dropped++;
      return true;
    }
    return false;
  }

  return {
    get buffered() {
      return buffered;
    },
    get dropped() {
      return dropped;
    },
    push(message) {
      items.push({ ...message, state: QUEUED, sends: 0 });
      buffered++;
      if (buffered <= capacity) return false;
      const droppedOne = dropOldest();
      compact();
      return droppedOne;
    },
    nextToSend() {
      while (next < items.length) {
        const item = items[next++]!;
        if (item.state === QUEUED) return item;
      }
      return undefined;
    },
    rewind() {
      next = head;
    },
    oldestQueued() {
      for (let i = head; i < items.length; i++) if (items[i]!.state === QUEUED) return items[i];
      return undefined;
    },
    complete(item) {
      if (item.state === DONE) return false;
      item.state = DONE;
      buffered--;
      compact();
      return true;
    },
    requeueInFlight() {
      let requeued = 0;
      for (let i = head; i < items.length; i++) {
        const item = items[i]!;
        if (item.state !== IN_FLIGHT) continue;
        item.state = QUEUED;
        item.sends++;
        requeued++;
      }
      return requeued;
    },
  };
}
