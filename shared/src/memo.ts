/**
 * `compute` made to keep its answers by key (a pattern compiled, a template parsed, a URL read):
 * at most `max` of them, all forgotten at once when full. A key whose computing throws keeps
 * nothing and throws again next time.
 */
export function boundedMemo<K, V>(compute: (key: K) => V, max = 1_000): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined && !kept.has(key)) {
      value = compute(key);
      if (kept.size >= max) kept.clear();
      kept.set(key, value);
    }
    return value as V;
  };
}
