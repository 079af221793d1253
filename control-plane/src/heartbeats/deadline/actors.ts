/**
 * One actor per heartbeat: its inputs wait in its own queue and it takes one step at a time.
 * Steps of different actors run together in batches (one transaction each, see steps.ts), up to
 * `concurrency` batches at once; while a batch runs, the next one fills, so a burst of pings or
 * of expiring deadlines costs a few transactions, not one per heartbeat.
 *
 * A step takes every ping its actor has queued (up to `pingsPerStep`), in order: a heartbeat
 * pinged in a loop costs one step per batch, however many pings it sent, and the actors are
 * served in the order their work arrived, so one heartbeat cannot hold back the others. Every
 * step re-reads the heartbeat and applies the clock, so pending ticks and change notices are
 * folded into it (`changed` also asks the step to refresh the KV projection). A step that failed
 * parks its actor with its pings back in front: later pings wait behind them until a tick or a
 * change wakes the actor, so a heartbeat's pings are applied in their order even when the
 * database was away for a while.
 */
export interface Step<P> {
  id: string;
  /** The actor's queued pings, oldest first (empty: a tick or a change). */
  pings: P[];
  /** The actor's next ping, left queued because the step was full; the step judges nothing after it. */
  following: P | undefined;
  changed: boolean;
}

/**
 * What a finished batch leaves behind: its slot is free at once, but its actors stay busy until
 * `after` settles (their events are being published), so one heartbeat's events go out in order.
 */
export interface BatchDone {
  after: Promise<unknown>;
}

export interface ActorsOptions<P> {
  /** Runs one step of each of several actors; must settle every ping it is given. */
  run(steps: Step<P>[]): Promise<BatchDone | void>;
  /** Steps per batch at most. */
  batchSize: number;
  /** Pings per step at most. */
  pingsPerStep: number;
  /** Pings per batch at most (a batch stops filling at either limit). */
  pingsPerBatch: number;
  concurrency: number;
  onError(err: unknown): void;
}

export interface Actors<P> {
  ping(id: string, ping: P): void;
  /** Also wakes a parked actor. */
  tick(id: string): void;
  /** Also wakes a parked actor. */
  changed(id: string): void;
  /** Called by a step that failed: its pings go back in front, and the actor waits for a tick or a change. */
  park(id: string, pings: readonly P[]): void;
  /**
   * Forgets the queued work of the actors `pred` selects and returns their queued pings (the
   * caller hands them back to the stream); `settled` resolves once their steps in flight ended.
   */
  drop(pred: (id: string) => boolean): { pings: P[]; settled: Promise<void> };
  /** Resolves when no step runs and none waits. */
  idle(): Promise<void>;
  stats(): { actors: number; queuedPings: number; batches: number; steps: number };
}

interface Actor<P> {
  pings: P[];
  tick: boolean;
  changed: boolean;
  busy: boolean;
  parked: boolean;
}

export function createActors<P>(opts: ActorsOptions<P>): Actors<P> {
  const actors = new Map<string, Actor<P>>();
  // Actors with work that are not busy, in arrival order.
  const ready = new Set<string>();
  let running = 0;
  let busy = 0;
  let pumpQueued = false;
  let waiters: { done: () => boolean; resolve: () => void }[] = [];
  const counters = { batches: 0, steps: 0 };

  const hasWork = (a: Actor<P>) => a.pings.length > 0 || a.tick || a.changed;

  const actor = (id: string) => {
    let a = actors.get(id);
    if (!a) {
      a = { pings: [], tick: false, changed: false, busy: false, parked: false };
      actors.set(id, a);
    }
    return a;
  };

  const wake = () => {
    waiters = waiters.filter((w) => (w.done() ? (w.resolve(), false) : true));
  };

  const pump = () => {
    pumpQueued = false;
    while (running < opts.concurrency && ready.size > 0) {
      const steps: Step<P>[] = [];
      let pings = 0;
      for (const id of ready) {
        if (steps.length >= opts.batchSize || pings >= opts.pingsPerBatch) break;
        ready.delete(id);
        const a = actors.get(id)!;
        a.busy = true;
        busy++;
        const taken = a.pings.splice(0, Math.min(opts.pingsPerStep, Math.max(1, opts.pingsPerBatch - pings)));
        pings += taken.length;
        steps.push({ id, pings: taken, following: a.pings[0], changed: a.changed });
        a.tick = false;
        a.changed = false;
      }
      running++;
      counters.batches++;
      counters.steps += steps.length;
      const release = () => {
        for (const s of steps) {
          busy--;
          const a = actors.get(s.id);
          if (!a) continue;
          a.busy = false;
          if (!hasWork(a)) actors.delete(s.id);
          else if (!a.parked) ready.add(s.id);
        }
        pump();
        wake();
      };
      void opts.run(steps).then(
        (done) => {
          running--;
          pump();
          void (done?.after ?? Promise.resolve()).catch(opts.onError).finally(release);
        },
        (err: unknown) => {
          running--;
          opts.onError(err);
          release();
        },
      );
    }
  };
  const pumpSoon = () => {
    if (pumpQueued) return;
    pumpQueued = true;
    queueMicrotask(pump);
  };

  const enqueue = (id: string, change: (a: Actor<P>) => void) => {
    const a = actor(id);
    change(a);
    if (!a.busy && !a.parked) ready.add(id);
    pumpSoon();
  };

  return {
    ping: (id, ping) => enqueue(id, (a) => a.pings.push(ping)),
    tick: (id) =>
      enqueue(id, (a) => {
        a.tick = true;
        a.parked = false;
      }),
    changed: (id) =>
      enqueue(id, (a) => {
        a.changed = true;
        a.parked = false;
      }),
    park(id, pings) {
      const a = actor(id);
      if (pings.length > 0) a.pings.unshift(...pings);
      a.parked = true;
      ready.delete(id);
    },
    drop(pred) {
      const pings: P[] = [];
      for (const [id, a] of actors) {
        if (!pred(id)) continue;
        pings.push(...a.pings);
        a.pings = [];
        a.tick = false;
        a.changed = false;
        ready.delete(id);
        if (!a.busy) actors.delete(id);
      }
      const done = () => ![...actors].some(([id, a]) => a.busy && pred(id));
      const settled = done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve }));
      return { pings, settled };
    },
    idle() {
      const done = () => running === 0 && busy === 0 && ready.size === 0;
      return done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve }));
    },
    stats() {
      let queuedPings = 0;
      for (const a of actors.values()) queuedPings += a.pings.length;
      return { actors: actors.size, queuedPings, ...counters };
    },
  };
}
