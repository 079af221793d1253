import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { natsNames, type Names } from '../../shared/src/subjects.ts';
import { requireTestEnv } from './env.ts';

export interface TestNats {
  url: string;
  nc: NatsConnection;
  namespace: string;
  names: Names;
  /** Deletes every stream and bucket of the namespace, then closes the connection. */
  close(): Promise<void>;
}

/** A NATS connection and a namespace no other test file uses. */
export async function createTestNats(): Promise<TestNats> {
  const url = requireTestEnv('nats');
  const namespace = `t${randomBytes(5).toString('hex')}`;
  const nc = await connect({ servers: url, name: `test-${namespace}` });
  const names = natsNames(namespace);
  return {
    url,
    nc,
    namespace,
    names,
    async close() {
      const jsm = await jetstreamManager(nc);
      for await (const s of jsm.streams.list()) {
        if (s.config.name.startsWith(`${namespace}_`) || s.config.name.startsWith(`KV_${namespace}_`)) {
          await jsm.streams.delete(s.config.name).catch(() => {});
        }
      }
      await nc.close();
    },
  };
}
