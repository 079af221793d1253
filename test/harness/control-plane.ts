import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../shared/src/config.ts';
import { allRoles, type Role } from '../../control-plane/src/runtime/roles.ts';
import { startControlPlane, type RunningControlPlane } from '../../control-plane/src/runtime/control-plane.ts';
import type { Clock } from '../../control-plane/src/platform/clock.ts';
import { createTestDatabase, quietLog, type TestDatabase } from './db.ts';
import { createTestNats, type TestNats } from './nats.ts';
import { registerSecret } from './secrets.ts';

export interface TestControlPlane {
  url: string;
  config: Config;
  db: TestDatabase;
  nats: TestNats;
  cp: RunningControlPlane;
  stop(): Promise<void>;
}

/**
 * A control plane on a free loopback port, over this file's own database and namespace; every
 * role on `clock` when one is given (a manual clock the test moves), else on the system clock.
 */
export async function startTestControlPlane(
  opts: { roles?: readonly Role[]; env?: Record<string, string>; clock?: Clock; regionHealthPeriodMs?: number } = {},
): Promise<TestControlPlane> {
  const db = await createTestDatabase();
  const nats = await createTestNats();
  const config = loadConfig({
    DATABASE_URL: db.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: nats.namespace,
    LOG_LEVEL: 'silent',
    SECRET_KEY: randomBytes(32).toString('base64url'),
    // Domain lookups never leave the machine: a test that wants them serves its own bootstrap file.
    RDAP_BOOTSTRAP_URL: 'http://127.0.0.1:9/rdap-bootstrap.json',
    // Pages render per request unless a test asks for snapshots: a test that writes a state and
    // looks at once must not race the change notification (test/status-pages/serving.test.ts does).
    STATUS_PAGE_MAX_AGE_SECONDS: '0',
    ...opts.env,
  });
  registerSecret(config.SECRET_KEY);
  const cp = await startControlPlane({
    config,
    log: quietLog,
    sql: db.sql,
    nc: nats.nc,
    roles: opts.roles ?? allRoles,
    port: 0,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.regionHealthPeriodMs !== undefined ? { regionHealthPeriodMs: opts.regionHealthPeriodMs } : {}),
  });
  return {
    url: cp.url!,
    config,
    db,
    nats,
    cp,
    async stop() {
      await cp.stop();
      await nats.close();
      await db.drop();
    },
  };
}
