import { createHeap } from '../../../../shared/src/heap.ts';
import type { Clock } from '../../platform/clock.ts';

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
  /** How many ids are armed in each group `groupOf` puts them in (empty without it). */
  countsByGroup(): ReadonlyMap<number, number>;
  readonly size: number;
  stop(): void;
}

/**
 * Every deadline of the process in one binary heap (typed arrays, ~16 bytes an entry) with one
 * timer armed at the earliest. When it fires, everything due is popped at once and handed to
 * `onDue` in one call, so a thousand heartbeats expiring in the same second cost one wake-up.
 * Ids map to small integer slots, reused after removal.
 */
export function createDeadlineTimers(opts: {
  clock: Clock;
  onDue: (ids: string[]) => void;
  /** How late each deadline fired after it came due (ms), called as it fires. */
  onLateness?: (lateMs: number) => void;
  /** The group of an id (its partition), asked once when the id is armed; see countsByGroup(). */
  groupOf?: (id: string) => number;
}): DeadlineTimers {
  const { clock } = opts;
  const heap = createHeap(1024);
  const slotOf = new Map<string, number>();
  const idOf: (string | undefined)[] = [];
  const free: number[] = [];
  const groupOfSlot: number[] = [];
  const perGroup = new Map<number, number>();
  let handle: unknown;
  let armedFor = Infinity;
  let rearmQueued = false;
  let stopped = false;

  const forget = (id: string, slot: number) => {
    slotOf.delete(id);
    idOf[slot] = undefined;
    free.push(slot);
    if (opts.groupOf) {
      const g = groupOfSlot[slot]!;
      const n = perGroup.get(g)! - 1;
      if (n === 0) perGroup.delete(g);
      else perGroup.set(g, n);
    }
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
      opts.onLateness?.(now - heap.peekDue());
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
      if (opts.groupOf) {
        const g = opts.groupOf(id);
        groupOfSlot[fresh] = g;
        perGroup.set(g, (perGroup.get(g) ?? 0) + 1);
      }
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
    countsByGroup: () => perGroup,
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
