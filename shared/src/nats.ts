import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './logger.ts';

export type { NatsConnection };

export interface NatsConnectOptions {
  servers: string;
  name: string;
  log: Logger;
}

/**
 * Connects and keeps reconnecting forever: a NATS outage must never end a process, it only
 * pauses what needs NATS (agents keep checking and buffer meanwhile).
 */
export async function connectNats(opts: NatsConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: opts.servers
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: 5_000,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        opts.log.warn({ nats: s.type, server: 'server' in s ? s.server : undefined }, 'nats connection status');
      }
    }
  })();
  return nc;
}

/** Resolves true when the server answers a round trip within the time limit. */
export async function natsAlive(nc: NatsConnection | undefined, timeoutMs = 1_000): Promise<boolean> {
  if (!nc || nc.isClosed()) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([nc.rtt().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
