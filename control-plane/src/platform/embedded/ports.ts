import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * `count` distinct TCP ports free now on the loopback interface. Each is held until all are
 * drawn: ports asked for one after the other can come back the same, the first being free again
 * once its listener closed.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const srv = createServer();
      srv.unref();
      servers.push(srv);
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, host, () => resolve());
      });
    }
    return servers.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
  }
}

/** Asks the OS for a free TCP port on the loopback interface. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Undefined when the port can be listened on now, else why not (EADDRINUSE, EACCES, ...). */
export function listenError(port: number, host = '127.0.0.1'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'EADDRINUSE'));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
}

/** True when nothing listens on the port yet. */
export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return (await listenError(port, host)) === undefined;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
