import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, type MessageTemplate } from '../templates.ts';
import { channel, httpUrl, postAll, type ChannelSpec } from './types.ts';
import { userAgent } from './http.ts';

// Headers we set ourselves: a configured header cannot replace them.
const reserved = /^(content-type|content-length|host|user-agent|idempotency-key|x-uptime-.*)$/i;
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'A header name is 1-100 token characters.')
  .refine((n) => !reserved.test(n), 'This header is set by the service and cannot be configured.');

const WebhookConfig = z.strictObject({
  url: httpUrl,
  secret: z
    .string()
    .min(16)
    .max(255)
    .optional()
    .describe('Write-only. Signs each request: X-Uptime-Signature: sha256=HMAC-SHA256(secret, "<timestamp>.<body>") in hex.'),
  headers: z
    .record(
      headerName,
      z
        .string()
        .max(2000)
        .regex(/^[^\r\n\0]*$/, 'A header value must be one line.'),
    )
    .refine((h) => Object.keys(h).length <= 20, 'At most 20 headers.')
    .optional()
    .describe('Write-only: extra request headers (often credentials).'),
});

/** The signature a receiver recomputes: HMAC-SHA256 over `<timestamp>.<raw body>`, hex, prefixed `sha256=`. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * The JSON body: the notification as it is (its `actions` included), the public contract. A
 * template, when the integration has one, words `message` (plain text) and adds `title`.
 */
export function webhookBody(n: Notification, template?: MessageTemplate | null): string {
  if (!template) return JSON.stringify(n);
  const m = compose(n, template);
  return JSON.stringify({ ...n, ...(template.title ? { title: m.title() } : {}), message: m.text() });
}

export const webhook: ChannelSpec<typeof WebhookConfig> = {
  type: 'webhook',
  config: WebhookConfig,
  secrets: ['url', 'secret', 'headers'],
  create: ({ http, now }) =>
    channel({
      build: ({ id, notification, config, template }) => {
        const body = webhookBody(notification, template);
        const timestamp = String(Math.floor(now().getTime() / 1000));
        return [
          {
            kind: 'http',
            method: 'POST',
            url: config.url,
            headers: {
              'user-agent': userAgent,
              ...config.headers,
              'content-type': 'application/json',
              'idempotency-key': id,
              'x-uptime-delivery': id,
              'x-uptime-event': notification.event,
              'x-uptime-timestamp': timestamp,
              ...(config.secret ? { 'x-uptime-signature': signWebhook(config.secret, timestamp, body) } : {}),
            },
            body,
          },
        ];
      },
      transmit: (out) => postAll(http, out),
    }),
};
