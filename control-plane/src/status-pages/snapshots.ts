import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';

const gzip = promisify(gzipCb);

/**
 * Rendered public status pages kept in memory (ADR 0039), so what a page costs the database
 * depends on how often what it shows changes, not on how many people look at it.
 *
 * - A snapshot is dropped when a change to its page or its project is announced (`invalidate`),
 *   and is stale once older than `maxAgeMs` (uptime bars and "since" durations move with time).
 * - A dropped snapshot is rendered again before it is served; a merely old one is served once
 *   more while one render replaces it in the background.
 * - Concurrent requests for a page that needs a render share that render (single flight).
 * - At most `maxPages` pages are kept; the least recently served goes first. A key takes a place
 *   only once its render found something: a burst of keys that name nothing (an unknown incident)
 *   evicts no snapshot and leaves none behind.
 */

export interface Rendered {
  pageId: string;
  projectId: string;
  /**
   * Each form of the page by name, all rendered from the same reads: the whole page and its live
   * fragment (`?fragment=1`); or the Atom and RSS feeds and the JSON summary.
   */
  renditions: Record<string, string>;
  /** Who may read it (ADR 0041), as the render read it; null: anyone. */
  access: PageAccess | null;
}

/** A private page's password hash and allow-list. */
export interface PageAccess {
  pageId: string;
  passwordHash: string | null;
  ipAllowlist: string[] | null;
}

export interface Variant {
  body: Buffer;
  /** The body gzipped once, for the many clients that take it (a page of 50 components is ~400 KB of HTML, ~20 KB gzipped). */
  gzip: Buffer;
  /** Strong validators, a hash of the body: one per encoding, as a strong validator names the bytes sent. */
  etag: string;
  gzipEtag: string;
}

export interface Snapshot {
  pageId: string;
  projectId: string;
  renditions: Record<string, Variant>;
  access: PageAccess | null;
  /** When it was rendered (ms since the epoch, on the cache's clock). */
  renderedAt: number;
}

interface Entry {
  snapshot?: Snapshot;
  /** Set when a change was announced after (or while) the snapshot was rendered. */
  dropped: boolean;
  inflight?: Promise<Snapshot | undefined>;
  /** Bumped by each invalidation, so a render that began before one does not count as fresh. */
  generation: number;
}

export interface SnapshotCache {
  /** The snapshot of the page at `key` (its slug), rendering it when needed; undefined: no such page. */
  get(key: string): Promise<Snapshot | undefined>;
  /** Drops the snapshots of a project's pages, or of one page. */
  invalidate(change: { projectId: string } | { pageId: string }): void;
  /** Drops every snapshot (the change feed was interrupted: changes may have been missed). */
  clear(): void;
  readonly size: number;
}

async function variant(text: string): Promise<Variant> {
  const body = Buffer.from(text);
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return { body, gzip: await gzip(body), etag: `"${hash}"`, gzipEtag: `"${hash}-gz"` };
}

export function snapshotCache(opts: {
  render: (key: string) => Promise<Rendered | undefined>;
  now: () => number;
  maxAgeMs: number;
  maxPages: number;
  onError?: (err: unknown, key: string) => void;
}): SnapshotCache {
  const entries = new Map<string, Entry>();
  /** First renders of keys not kept yet, shared by their concurrent requests. */
  const pending = new Map<string, Entry>();

  const touch = (key: string, entry: Entry) => {
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > opts.maxPages) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
    }
  };

  const refresh = (key: string, entry: Entry): Promise<Snapshot | undefined> => {
    if (entry.inflight) return entry.inflight;
    const generation = entry.generation;
    const started = opts.now();
    const run = (async () => {
      try {
        const r = await opts.render(key);
        if (!r) {
          if (entries.get(key) === entry) entries.delete(key);
          return undefined;
        }
        if (pending.get(key) === entry) touch(key, entry);
        const renditions: Record<string, Variant> = {};
        for (const [name, text] of Object.entries(r.renditions)) renditions[name] = await variant(text);
        const snapshot: Snapshot = { pageId: r.pageId, projectId: r.projectId, renditions, access: r.access, renderedAt: started };
        entry.snapshot = snapshot;
        entry.dropped = entry.generation !== generation;
        return snapshot;
      } finally {
        entry.inflight = undefined;
        if (pending.get(key) === entry) pending.delete(key);
      }
    })();
    entry.inflight = run;
    return run;
  };

  return {
    async get(key) {
      const first = pending.get(key);
      if (first) return refresh(key, first);
      let entry = entries.get(key);
      if (!entry) {
        entry = { dropped: false, generation: 0 };
        pending.set(key, entry);
        return refresh(key, entry);
      }
      touch(key, entry);
      const s = entry.snapshot;
      if (!s || entry.dropped) return refresh(key, entry);
      if (opts.now() - s.renderedAt >= opts.maxAgeMs) {
        // Served once more while one render replaces it; an error keeps the old one.
        refresh(key, entry).catch((err: unknown) => opts.onError?.(err, key));
      }
      return s;
    },
    invalidate(change) {
      for (const entry of [...entries.values(), ...pending.values()]) {
        const s = entry.snapshot;
        const hit = !s || ('projectId' in change ? s.projectId === change.projectId : s.pageId === change.pageId);
        // A page not rendered yet may be the one that changed: its render in flight is not fresh.
        if (hit) {
          entry.dropped = true;
          entry.generation++;
        }
      }
    },
    clear() {
      for (const entry of [...entries.values(), ...pending.values()]) {
        entry.dropped = true;
        entry.generation++;
      }
    },
    get size() {
      return entries.size;
    },
  };
}

/** The HTTP date of a time, at the second (what Last-Modified and If-Modified-Since carry). */
export const httpDate = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toUTCString();

/**
 * Whether a request's validators match what would be sent: If-None-Match (a list, or `*`) wins
 * over If-Modified-Since, as RFC 9110 says.
 */
export function notModified(
  headers: { 'if-none-match'?: string | undefined; 'if-modified-since'?: string | undefined },
  etags: readonly string[],
  lastModifiedMs: number,
): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    // Weak comparison (RFC 9110 13.1.2): the same content in another encoding is not modified.
    return inm.split(',').some((t) => etags.includes(t.trim().replace(/^W\//, '')));
  }
  const ims = headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Math.floor(lastModifiedMs / 1000) * 1000 <= since;
}
