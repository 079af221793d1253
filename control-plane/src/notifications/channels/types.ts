import { z } from 'zod';
import type { IntegrationType, Notification } from '../../../../shared/src/contracts/notify.ts';
import type { HttpClient } from './http.ts';

/** One attempt to tell one integration about one event. */
export interface Delivery<C> {
  /** The delivery id: the same on every attempt, so a receiver can drop a repeat. */
  id: string;
  attempt: number;
  notification: Notification;
  integration: { id: string; name: string };
  config: C;
}

/** Sends or throws a DeliveryError (`permanent` when retrying cannot help). */
export interface Channel<C> {
  send(delivery: Delivery<C>): Promise<void>;
}

export interface ChannelDeps {
  http: HttpClient;
  /** SMTP_URL and SMTP_FROM: what an email integration without its own server uses. */
  smtp: { url: string | undefined; from: string };
  now: () => Date;
}

export interface ChannelSpec<S extends z.ZodObject = z.ZodObject> {
  type: IntegrationType;
  /** Every setting of the type, secrets included; defaults applied when parsed. */
  config: S;
  /** Settings stored sealed and never returned: a read shows `<name>_set` (and `<name>_hint` for URLs). */
  secrets: readonly string[];
  create(deps: ChannelDeps): Channel<z.infer<S>>;
}

export const httpUrl = z
  .url({ protocol: /^https?$/, hostname: /.+/ })
  .max(2048)
  .describe('An http or https URL.');

/** An http(s) URL without its trailing slashes, for base URLs that paths are added to. */
export const baseUrl = httpUrl.transform((u) => u.replace(/\/+$/, ''));

export const toneIcon = { down: '🔴', up: '✅', info: '🔔' } as const;
