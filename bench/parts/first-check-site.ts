import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export type Site = {
  url: string;
  /** Requests to path so far. */
  count(path: string): number;
  /** Resolves with the arrival time (performance.now()) of the n-th request to path (1-based), at most timeoutMs from now. */
  arrival(path: string, n: number, timeoutMs: number): Promise<number | undefined>;
  close(): Promise<void>;
};

/** The monitored site: answers 200 "ok" and notes when each request to each path arrived. */
export async function startSite(): Promise<Site> {
  const arrivals = new Map<string, number[]>();
  const waiters = new Map<string, { n: number; resolve: (at: number) => void }[]>();
  const server = createServer((req, res) => {
    const at = performance.now();
    const path = req.url ?? '/';
    const list = arrivals.get(path) ?? [];
    list.push(at);
    arrivals.set(path, list);
    const pending = waiters.get(path) ?? [];
    for (const w of pending) if (w.n <= list.length) w.resolve(list[w.n - 1]!);
    waiters.set(
      path,
      pending.filter((w) => w.n > list.length),
    );
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (path) => arrivals.get(path)?.length ?? 0,
    arrival(path, n, timeoutMs) {
      const seen = arrivals.get(path);
      if (seen && seen.length >= n) return Promise.resolve(seen[n - 1]);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        const list = waiters.get(path) ?? [];
        list.push({ n, resolve: (at) => (clearTimeout(timer), resolve(at)) });
        waiters.set(path, list);
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
