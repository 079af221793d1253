import { createServer } from 'node:net';

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
