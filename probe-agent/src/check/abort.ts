/** Why a check ended early. */
export const TIMED_OUT = Symbol('timed out');
export const CANCELLED = Symbol('cancelled');

/** The abort state of one check: why it ended early, and how to stop its hop in flight. */
export type RunCell = { reason: symbol | null; onAbort: (() => void) | null };

export function abortCell(cell: RunCell, reason: symbol): void {
  if (cell.reason !== null) return;
  cell.reason = reason;
  cell.onAbort?.();
}

/** Registers a check with its caller's signal; returns the function that forgets it. */
export type SignalWatch = (signal: AbortSignal, cell: RunCell) => () => void;

/**
 * One listener per caller signal (the agent passes one signal to every check), not one per check:
 * adding and removing an event listener per check costs more than the rest of a keep-alive check.
 */
export function createSignalWatch(): SignalWatch {
  const cellsBySignal = new WeakMap<AbortSignal, Set<RunCell>>();
  return (signal, cell) => {
    let cells = cellsBySignal.get(signal);
    if (cells === undefined) {
      const created = new Set<RunCell>();
      cells = created;
      cellsBySignal.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          for (const c of created) abortCell(c, CANCELLED);
          created.clear();
        },
        { once: true },
      );
    }
    cells.add(cell);
    return () => cells.delete(cell);
  };
}

/**
 * A check's abort state armed: ended by its time limit or its caller's signal (already aborted:
 * at once). `release` disarms both when the check is over.
 */
export function armRun(watch: SignalWatch, timeoutMs: number, signal?: AbortSignal): { cell: RunCell; release(): void } {
  const cell: RunCell = { reason: null, onAbort: null };
  const timer = setTimeout(abortCell, timeoutMs, cell, TIMED_OUT);
  const unwatch = signal === undefined ? null : watch(signal, cell);
  if (signal?.aborted) abortCell(cell, CANCELLED);
  return {
    cell,
    release() {
      cell.onAbort = null;
      clearTimeout(timer);
      unwatch?.();
    },
  };
}
