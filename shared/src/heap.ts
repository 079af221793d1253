/**
 * Binary min-heap of integer ids (small non-negative slots) keyed by due time. Typed arrays keep it
 * at 16 bytes per entry (due 8, id 4, position 4) and out of the garbage collector's way; `pos`
 * maps an id to its heap index so remove and update are O(log n).
 */
export type DueHeap = {
  readonly size: number;
  /** Inserts id, or moves it when already present. */
  push(id: number, due: number): void;
  /** Id with the earliest due time, -1 when empty. */
  peek(): number;
  /** Earliest due time, Infinity when empty. */
  peekDue(): number;
  /** Removes and returns the earliest id, -1 when empty. */
  pop(): number;
  remove(id: number): boolean;
  update(id: number, due: number): boolean;
  has(id: number): boolean;
  /** Due time of id, NaN when absent. */
  dueOf(id: number): number;
};

export function createHeap(initialCapacity = 64): DueHeap {
  let capacity = Math.max(1, initialCapacity);
  let dues = new Float64Array(capacity);
  let ids = new Int32Array(capacity);
  let pos = new Int32Array(capacity).fill(-1);
  let size = 0;

  function ensureSlot(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new RangeError(`heap id must be a non-negative int32, got ${id}`);
    if (id < pos.length) return;
    let length = pos.length;
    while (length <= id) length *= 2;
    const grown = new Int32Array(length).fill(-1);
    grown.set(pos);
    pos = grown;
  }

  function growEntries(): void {
    capacity *= 2;
    const d = new Float64Array(capacity);
    d.set(dues);
    dues = d;
    const i = new Int32Array(capacity);
    i.set(ids);
    ids = i;
  }

  function place(index: number, id: number, due: number): void {
    dues[index] = due;
    ids[index] = id;
    pos[id] = index;
  }

  function siftUp(index: number): void {
    const id = ids[index]!;
    const due = dues[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (dues[parent]! <= due) break;
      place(index, ids[parent]!, dues[parent]!);
      index = parent;
    }
    place(index, id, due);
  }

  function siftDown(index: number): void {
    const id = ids[index]!;
    const due = dues[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && dues[right]! < dues[left]! ? right : left;
      if (dues[child]! >= due) break;
      place(index, ids[child]!, dues[child]!);
      index = child;
    }
    place(index, id, due);
  }

  function removeAt(index: number): void {
    const removed = ids[index]!;
    pos[removed] = -1;
    size--;
    if (index === size) return;
    place(index, ids[size]!, dues[size]!);
    if (index > 0 && dues[index]! < dues[(index - 1) >> 1]!) siftUp(index);
    else siftDown(index);
  }

  function has(id: number): boolean {
    return id >= 0 && id < pos.length && pos[id]! !== -1;
  }

  function update(id: number, due: number): boolean {
    if (!has(id)) return false;
    const index = pos[id]!;
    const old = dues[index]!;
    dues[index] = due;
    if (due < old) siftUp(index);
    else siftDown(index);
    return true;
  }

  return {
    get size() {
      return size;
    },
    push(id, due) {
      ensureSlot(id);
      if (update(id, due)) return;
      if (size === capacity) growEntries();
      place(size, id, due);
      size++;
      siftUp(size - 1);
    },
    peek: () => (size === 0 ? -1 : ids[0]!),
    peekDue: () => (size === 0 ? Infinity : dues[0]!),
    pop() {
      if (size === 0) return -1;
      const id = ids[0]!;
      removeAt(0);
      return id;
    },
    remove(id) {
      if (!has(id)) return false;
      removeAt(pos[id]!);
      return true;
    },
    update,
    has,
    dueOf: (id) => (has(id) ? dues[pos[id]!]! : NaN),
  };
}
