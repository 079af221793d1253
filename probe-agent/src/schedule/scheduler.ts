import { createHeap } from '../../../shared/src/heap.ts';

export type SchedulerOptions<T> = {
  now: () => number;
  setTimer: (fn: () => void, delayMs: number) => T;
  clearTimer: (handle: T) => void;
  /** Runs in flight at most; further due runs wait in FIFO order. */
  concurrency: number;
  /** Receives the slot time it was scheduled for, so lateness can be measured; offGrid for a runOnce. */
  run: (id: string, scheduledAt: number, offGrid: boolean) => Promise<void>;
  /** now() - scheduledAt when a slot's run starts (timer delay plus queueing); not reported for runOnce. */
  onLateness?: (lateMs: number, id: string) => void;
  onError?: (err: unknown, id: string) => void;
};

export type SchedulerStats = {
  /** Runs started. */
  runs: number;
  /** Slots not run: missed while the process was late, or while the previous run was still busy. */
  skipped: number;
  /** Runs whose promise rejected. */
  failed: number;
  /** Runs started off the grid (runOnce); counted in runs too. */
  offGrid: number;
  inFlight: number;
  queued: number;
};

export type Scheduler = {
  /** Schedules id; an id already present only changes its interval (see update). */
  add(id: string, intervalMs: number, phaseSeed?: string): void;
  remove(id: string): boolean;
  /** A changed interval takes effect at the next slot of the new grid; the same interval is a no-op. */
  update(id: string, intervalMs: number): boolean;
  /**
   * Runs id once, off its grid, as soon as a run may start; the grid stays as it is. `at` is the
   * run's scheduled time, moved 1 ms when it falls on a slot of id's grid (see offGridTime). While
   * a run of id is queued or running this one waits for it, and a slot coming due while this one
   * is queued or running is skipped, as for any busy monitor. False when id is not scheduled.
   */
  runOnce(id: string, at: number): boolean;
  has(id: string): boolean;
  /** The next slot of id, undefined when not scheduled. */
  dueOf(id: string): number | undefined;
  readonly size: number;
  stats(): SchedulerStats;
  /** Disarms the timer, drops waiting runs and resolves when runs in flight have finished. */
  stop(): Promise<void>;
};

/** FNV-1a 32-bit over UTF-16 code units, then murmur3's finalizer so nearby ids spread too. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Offset of id's slots inside its interval: every process derives the same value. */
export function phaseOf(id: string, intervalMs: number): number {
  return hash32(id) % intervalMs;
}

/** The earliest t >= now with t ≡ phase (mod interval). */
export function nextSlot(now: number, intervalMs: number, phase: number): number {
  return phase + Math.ceil((now - phase) / intervalMs) * intervalMs;
}

/**
 * The scheduled time of a run off the grid owed for `at`: `at` itself, or 1 ms later when it falls
 * on a slot, so its result never shares a slot's msg id (a slot an old owner checked with the old
 * url, say). Every agent derives the same value, so a repeat of the run is stored once.
 */
export function offGridTime(at: number, intervalMs: number, phase: number): number {
  return (((at - phase) % intervalMs) + intervalMs) % intervalMs === 0 ? at + 1 : at;
}

type Entry = {
  id: string;
  slot: number;
  seed: string;
  intervalMs: number;
  due: number;
  /** Queued or running: a slot that comes due meanwhile is skipped, never overlapped. */
  busy: boolean;
  /** An off-grid run asked for while busy: it starts when the current run ends. */
  onceAt: number | undefined;
  removed: boolean;
};

type Job = { entry: Entry; scheduledAt: number; offGrid: boolean };

// setTimeout fires at once for delays beyond int32; longer waits re-arm when they wake up.
const MAX_DELAY_MS = 0x7fffffff;

export function createScheduler<T>(opts: SchedulerOptions<T>): Scheduler {
  if (!(opts.concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
  const heap = createHeap();
  const byId = new Map<string, Entry>();
  const bySlot: Array<Entry | undefined> = [];
  const freeSlots: number[] = [];
  let queue: Array<Job | undefined> = [];
  let queueHead = 0;
  let timer: T | null = null;
  let armedFor = Infinity;
  let stopped = false;
  let drained: (() => void) | null = null;
  const counters = { runs: 0, skipped: 0, failed: 0, offGrid: 0, inFlight: 0 };

  function checkInterval(intervalMs: number): void {
    if (!(intervalMs > 0) || !Number.isFinite(intervalMs))
      throw new RangeError(`interval must be a positive number of ms, got ${intervalMs}`);
  }

  function arm(): void {
    if (stopped) return;
    const due = heap.peekDue();
    if (due === armedFor && (timer !== null || due === Infinity)) return;
    if (timer !== null) opts.clearTimer(timer);
    timer = null;
    armedFor = due;
    if (due === Infinity) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, Math.ceil(due - opts.now())));
    timer = opts.setTimer(onTimer, delay);
  }

  function onTimer(): void {
    timer = null;
    armedFor = Infinity;
    if (stopped) return;
    const t = opts.now();
    while (heap.size > 0 && heap.peekDue() <= t) {
      const entry = bySlot[heap.peek()]!;
      let scheduledAt = entry.due;
      const missed = Math.floor((t - scheduledAt) / entry.intervalMs);
      if (missed > 0) {
        counters.skipped += missed;
        scheduledAt += missed * entry.intervalMs;
      }
      // The next slot follows the schedule, not the completion: no drift.
      entry.due = scheduledAt + entry.intervalMs;
      heap.update(entry.slot, entry.due);
      if (entry.busy) {
        counters.skipped++;
        continue;
      }
      entry.busy = true;
      queue.push({ entry, scheduledAt, offGrid: false });
    }
    pump();
    arm();
  }

  function pump(): void {
    while (!stopped && counters.inFlight < opts.concurrency && queueHead < queue.length) {
      const job = queue[queueHead]!;
      queue[queueHead++] = undefined;
      if (!job.entry.removed) start(job);
    }
    if (queueHead > 1024 && queueHead * 2 > queue.length) {
      queue = queue.slice(queueHead);
      queueHead = 0;
    }
  }

  function start({ entry, scheduledAt, offGrid }: Job): void {
    counters.inFlight++;
    counters.runs++;
    if (offGrid) counters.offGrid++;
    else opts.onLateness?.(opts.now() - scheduledAt, entry.id);
    let running: Promise<void>;
    try {
      running = Promise.resolve(opts.run(entry.id, scheduledAt, offGrid));
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .catch((err: unknown) => {
        counters.failed++;
        opts.onError?.(err, entry.id);
      })
      .finally(() => {
        counters.inFlight--;
        entry.busy = false;
        if (entry.onceAt !== undefined && !entry.removed && !stopped) {
          entry.busy = true;
          queue.push({ entry, scheduledAt: entry.onceAt, offGrid: true });
        }
        entry.onceAt = undefined;
        pump();
        if (counters.inFlight === 0) drained?.();
      });
  }

  function add(id: string, intervalMs: number, phaseSeed: string = id): void {
    checkInterval(intervalMs);
    if (byId.has(id)) {
      update(id, intervalMs);
      return;
    }
    const slot = freeSlots.pop() ?? bySlot.length;
    const due = nextSlot(opts.now(), intervalMs, phaseOf(phaseSeed, intervalMs));
    const entry: Entry = { id, slot, seed: phaseSeed, intervalMs, due, busy: false, onceAt: undefined, removed: false };
    byId.set(id, entry);
    bySlot[slot] = entry;
    heap.push(slot, due);
    arm();
  }

  function remove(id: string): boolean {
    const entry = byId.get(id);
    if (entry === undefined) return false;
    entry.removed = true;
    byId.delete(id);
    bySlot[entry.slot] = undefined;
    heap.remove(entry.slot);
    freeSlots.push(entry.slot);
    arm();
    return true;
  }

  function update(id: string, intervalMs: number): boolean {
    checkInterval(intervalMs);
    const entry = byId.get(id);
    if (entry === undefined) return false;
    if (entry.intervalMs === intervalMs) return true;
    entry.intervalMs = intervalMs;
    entry.due = nextSlot(opts.now(), intervalMs, phaseOf(entry.seed, intervalMs));
    heap.update(entry.slot, entry.due);
    arm();
    return true;
  }

  function runOnce(id: string, at: number): boolean {
    const entry = byId.get(id);
    if (entry === undefined || stopped) return false;
    const scheduledAt = offGridTime(at, entry.intervalMs, phaseOf(entry.seed, entry.intervalMs));
    if (entry.busy) {
      entry.onceAt = scheduledAt;
      return true;
    }
    entry.busy = true;
    queue.push({ entry, scheduledAt, offGrid: true });
    pump();
    return true;
  }

  function stop(): Promise<void> {
    stopped = true;
    if (timer !== null) opts.clearTimer(timer);
    timer = null;
    for (const job of queue) if (job !== undefined) job.entry.busy = false;
    queue = [];
    queueHead = 0;
    if (counters.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => (drained = resolve));
  }

  return {
    add,
    remove,
    update,
    runOnce,
    has: (id) => byId.has(id),
    dueOf: (id) => byId.get(id)?.due,
    get size() {
      return byId.size;
    },
    stats: () => ({ ...counters, queued: queue.length - queueHead }),
    stop,
  };
}
