/**
 * Rendezvous (highest-random-weight) hashing: every agent of a region computes, from the same
 * live set, the same owner for a monitor, with no coordinator. When an agent leaves only its own
 * monitors move (each to the runner-up); when one joins it takes about 1/n of them, from everyone.
 */

/** A 53-bit weight of (key, candidate): cyrb53 over both, so weights compare exactly as JS numbers. */
export function rendezvousWeight(key: string, candidate: string): number {
  const [h1, h2] = keyState(key);
  return weigh(h1, h2, candidate);
}

/** The candidate with the highest weight for key (ties: the greater id); undefined when none. */
export function rendezvousOwner(key: string, candidates: Iterable<string>): string | undefined {
  const [h1, h2] = keyState(key);
  let best: string | undefined;
  let bestWeight = -1;
  for (const c of candidates) {
    const w = weigh(h1, h2, c);
    if (w > bestWeight || (w === bestWeight && best !== undefined && c > best)) {
      best = c;
      bestWeight = w;
    }
  }
  return best;
}

// The key's part of the hash is computed once per lookup, not once per candidate.
function keyState(key: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  // A separator no id contains keeps ("ab","c") and ("a","bc") apart.
  return [Math.imul(h1, 2654435761), Math.imul(h2, 1597334677)];
}

function weigh(h1: number, h2: number, candidate: string): number {
  for (let i = 0; i < candidate.length; i++) {
    const c = candidate.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
