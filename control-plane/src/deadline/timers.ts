import { createHeap } from '../../../probe-agent/src/schedule/heap.ts';
import type { Clock } from './clock.ts';

// setTimeout fires at once for delays beyond int32; a longer wait re-arms when it wakes up.
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface DeadlineTimers {
  /** Arms `id` to come due at `at` (ms since the epoch), or disarms it when null. */
  set(id: string, at: number | null): void;
  /** Arms `id` unless it is armed already (a step's fresher deadline wins over a bulk load). */
  setIfAbsent(id: string, at: number | null): void;
  /** Disarms every id `pred` selects; returns how many. */
  clearWhere(pred: (id: string) => boolean): number;
  dueOf(id: string): number | undefined;
  readonly size: number;
  stop(): void;
}

/**
 * Every deadline of the process in one binary heap (typed arrays, ~16 bytes an entry) with one
 * timer armed at the earliest. When it fires, everything due is popped at once and handed to
 * `onDue` in one call, so a thousand heartbeats expiring in the same second cost one wake-up.
 * Ids map to small integer slots, reused after removal.
 */
export function createDeadlineTimers(opts: { clock: Clock; onDue: (ids: string[]) => void }): DeadlineTimers {
  const { clock } = opts;
  const heap = createHeap(1024);
  const slotOf = new Map<string, number>();
  const idOf: (string | undefined)[] = [];
  const free: number[] = [];
  let handle: unknown;
  let armedFor = Infinity;
  let rearmQueued = false;
  let stopped = false;

  const forget = (id: string, slot: number) => {
    slotOf.delete(id);
    idOf[slot] = undefined;
    free.push(slot);
  };

  const arm = () => {
    rearmQueued = false;
    const due = heap.peekDue();
    if (due === armedFor || stopped) return;
    if (handle !== undefined) clock.clearTimer(handle);
    handle = undefined;
    armedFor = due;
    if (due === Infinity) return;
    handle = clock.setTimer(fire, Math.min(MAX_DELAY_MS, Math.max(0, due - clock.now())));
  };
  // Many sets in one turn (a partition load) re-arm the timer once.
  const rearmSoon = () => {
    if (rearmQueued) return;
    rearmQueued = true;
    queueMicrotask(arm);
  };

  function fire() {
    handle = undefined;
    armedFor = Infinity;
    if (stopped) return;
    const now = clock.now();
    const due: string[] = [];
    while (heap.size > 0 && heap.peekDue() <= now) {
      const slot = heap.pop();
      const id = idOf[slot]!;
      forget(id, slot);
      due.push(id);
    }
    arm();
    if (due.length > 0) opts.onDue(due);
  }

  const set = (id: string, at: number | null) => {
    const slot = slotOf.get(id);
    if (at === null) {
      if (slot === undefined) return;
      heap.remove(slot);
      forget(id, slot);
    } else if (slot !== undefined) {
      heap.update(slot, at);
    } else {
      const fresh = free.pop() ?? idOf.length;
      slotOf.set(id, fresh);
      idOf[fresh] = id;
      heap.push(fresh, at);
    }
    rearmSoon();
  };

  return {
    set,
    setIfAbsent(id, at) {
      if (!slotOf.has(id)) set(id, at);
    },
    clearWhere(pred) {
      let n = 0;
      for (const [id, slot] of [...slotOf]) {
        if (!pred(id)) continue;
        heap.remove(slot);
        forget(id, slot);
        n++;
      }
      if (n > 0) rearmSoon();
      return n;
    },
    dueOf(id) {
      const slot = slotOf.get(id);
      return slot === undefined ? undefined : heap.dueOf(slot);
    },
    get size() {
      return heap.size;
    },
    stop() {
      stopped = true;
      if (handle !== undefined) clock.clearTimer(handle);
      handle = undefined;
    },
  };
}
