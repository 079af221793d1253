export type Summary = { count: number; min: number; mean: number; p50: number; p95: number; p99: number; p999: number; max: number };

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    min: sorted.length ? sorted[0]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(Float64Array.from(values).sort(), 50);
}

/** A growable Float64Array, so millions of samples stay out of the garbage collector's way. */
export function createSamples(initial = 1024) {
  let data = new Float64Array(initial);
  let length = 0;
  return {
    push(v: number) {
      if (length === data.length) {
        const grown = new Float64Array(data.length * 2);
        grown.set(data);
        data = grown;
      }
      data[length++] = v;
    },
    get length() {
      return length;
    },
    values: () => data.subarray(0, length),
  };
}

export const round = (v: number, digits = 2) => (Number.isFinite(v) ? Math.round(v * 10 ** digits) / 10 ** digits : v);

/** Rounded to `digits` significant digits: ratios far below 1 keep their information. */
export const sig = (v: number, digits = 3) => (Number.isFinite(v) && v !== 0 ? Number(v.toPrecision(digits)) : v);
