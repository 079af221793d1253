import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../../../shared/src/config.ts';
import type { Logger } from '../../../../shared/src/logger.ts';
import type { NatsConnection } from '../../../../shared/src/nats.ts';
import type { Sql } from '../db/sql.ts';

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

/** Keys derived from SECRET_KEY, one per purpose. */
export interface Keys {
  checkCredentials: Buffer;
  integrationSecrets: Buffer;
  /** Signs the acknowledge and snooze links of alerts, and heartbeats' snooze URLs. */
  alertLinks: Buffer;
  /** Signs the confirm and unsubscribe links sent to status page subscribers. */
  subscriberLinks: Buffer;
  /** Signs the cookie that lets a reader into a private status page. */
  statusPageAccess: Buffer;
}

/** What every route module receives: the adapters, passed in explicitly. */
export interface ApiContext {
  config: Config;
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  keys: Keys;
  now: () => Date;
}
