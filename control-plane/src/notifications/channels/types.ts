import { z } from 'zod';
import type { IntegrationType, Notification } from '../../../../shared/src/contracts/notify.ts';
import type { MessageTemplate } from '../templates.ts';
import { userAgent, type HttpClient } from './http.ts';

/** One attempt to tell one integration about one event. */
export interface Delivery<C> {
  /** The delivery id: the same on every attempt, so a receiver can drop a repeat. */
  id: string;
  attempt: number;
  notification: Notification;
  integration: { id: string; name: string };
  config: C;
  /** The integration's message template (ADR 0033); none: the standard wording. */
  template?: MessageTemplate | null;
}

/** One HTTP request a channel makes: the exact bytes of its body. */
export interface HttpOut {
  kind: 'http';
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One email a channel sends. */
export interface MailOut {
  kind: 'email';
  /** The SMTP server (the integration's own or SMTP_URL); null when neither is set. */
  smtp_url: string | null;
  from: string;
  to: string[];
  subject: string;
  headers: Record<string, string>;
  text: string;
  html: string;
}

export type Outbound = HttpOut | MailOut;

/**
 * A channel builds the request(s) of a delivery, which is what a preview shows, then sends
 * exactly those; `send` is both, throwing a DeliveryError (`permanent` when retrying cannot help).
 */
export interface Channel<C> {
  build(delivery: Delivery<C>): Outbound[];
  transmit(out: readonly Outbound[], delivery: Delivery<C>): Promise<void>;
  send(delivery: Delivery<C>): Promise<void>;
}

/** A channel from its two halves. */
export function channel<C>(parts: Pick<Channel<C>, 'build' | 'transmit'>): Channel<C> {
  return { ...parts, send: (d) => parts.transmit(parts.build(d), d) };
}

/** The JSON POST most channels make. */
export function jsonPost(url: string, body: unknown, headers: Record<string, string> = {}): HttpOut {
  return {
    kind: 'http',
    method: 'POST',
    url,
    headers: { 'user-agent': userAgent, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Sends HTTP requests one after the other: a refused one stops the rest. */
export async function postAll(http: HttpClient, out: readonly Outbound[]): Promise<void> {
  for (const o of out) {
    if (o.kind !== 'http') throw new Error('an HTTP channel built an email');
    await http.post(o.url, { body: o.body, headers: o.headers });
  }
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

/** The labels of the action links, the same in every channel. */
export const actionLabels = { acknowledge: 'Acknowledge', snooze: 'Snooze', view: 'View' } as const;

/** The action links of a notification, in the order every channel shows them; none without actions. */
export function actionLinks(n: Notification): { key: keyof typeof actionLabels; label: string; url: string }[] {
  const a = n.actions;
  if (!a) return [];
  return [
    { key: 'acknowledge', label: actionLabels.acknowledge, url: a.acknowledge_url },
    { key: 'snooze', label: actionLabels.snooze, url: a.snooze_url },
    { key: 'view', label: actionLabels.view, url: a.view_url },
  ];
}
