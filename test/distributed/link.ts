import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Link {
  /** Where the far side is reached through this link. */
  port: number;
  /** Drops every connection and refuses new ones: the region is cut off. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay standing in for the network between a region and the central cluster, so a test can
 * cut a region off and reconnect it without network namespaces or root.
 */
export async function startLink(targetPort: number, host = '127.0.0.1'): Promise<Link> {
  const sockets = new Set<Socket>();
  let up = true;
  const server = createServer((inbound) => {
    if (!up) {
      inbound.destroy();
      return;
    }
    const outbound = connect(targetPort, host);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  server.listen(0, host);
  await once(server, 'listening');
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      up = false;
      dropAll();
    },
    restore() {
      up = true;
    },
    async close() {
      up = false;
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
