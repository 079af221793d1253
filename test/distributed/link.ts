import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Link {
  /** Where the far side is reached through this link. */
  port: number;
  /** Drops every connection and refuses new ones: the region is cut off. */
  cut(): void;
  restore(): void;
  /**
   * Holds what the far side sends (what the near side sends still reaches it) until release():
   * a server that is slow to answer and to deliver.
   */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay standing in for the network between a region and the central cluster, so a test can
 * cut a region off and reconnect it without network namespaces or root.
 */
export async function startLink(targetPort: number, host = '127.0.0.1'): Promise<Link> {
  const sockets = new Set<Socket>();
  let up = true;
  let holding = false;
  const held: { to: Socket; chunk: Buffer }[] = [];
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
    inbound.pipe(outbound);
    outbound.on('data', (chunk: Buffer) => {
      if (holding) held.push({ to: inbound, chunk });
      else inbound.write(chunk);
    });
    outbound.on('end', () => inbound.end());
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
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      up = false;
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
