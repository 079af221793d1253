import { lookup } from 'node:dns/promises';

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export type DnsCache = {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
  clear(): void;
  readonly size: number;
};

export type DnsCacheOptions = {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
  resolve?: Resolve;
};

/** getaddrinfo, so /etc/hosts applies as it does for every other program on the probe host. */
export const systemResolve: Resolve = async (hostname) => {
  const found = await lookup(hostname, { all: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Positive answers only, for a fixed TTL (getaddrinfo does not expose record TTLs). Failures are
 * not cached: a monitor whose DNS breaks must see it on its next check. Concurrent lookups of one
 * name share a single query, and the least recently used name is evicted beyond maxEntries.
 */
export function createDnsCache(opts: DnsCacheOptions = {}): DnsCache {
  const ttlMs = opts.ttlMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const now = opts.now ?? Date.now;
  const query = opts.resolve ?? systemResolve;
  const entries = new Map<string, { addresses: ResolvedAddress[]; expiresAt: number }>();
  const inFlight = new Map<string, Promise<ResolvedAddress[]>>();

  function resolve(hostname: string): Promise<ResolvedAddress[]> {
    const key = hostname.toLowerCase();
    const hit = entries.get(key);
    if (hit !== undefined) {
      entries.delete(key);
      if (hit.expiresAt > now()) {
        entries.set(key, hit);
        return Promise.resolve(hit.addresses);
      }
    }
    const pending = inFlight.get(key);
    if (pending !== undefined) return pending;
    const started = query(key).then(
      (addresses) => {
        inFlight.delete(key);
        if (ttlMs > 0 && addresses.length > 0) {
          entries.set(key, { addresses, expiresAt: now() + ttlMs });
          for (const oldest of entries.keys()) {
            if (entries.size <= maxEntries) break;
            entries.delete(oldest);
          }
        }
        return addresses;
      },
      (err: unknown) => {
        inFlight.delete(key);
        throw err;
      },
    );
    inFlight.set(key, started);
    return started;
  }

  return {
    resolve,
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
