import { isIP, isIPv6 } from 'node:net';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import { render } from '../content.ts';
import { DeliveryError } from '../errors.ts';
import type { HttpClient } from './http.ts';
import { toneIcon, type ChannelSpec } from './types.ts';

const EmailConfig = z.strictObject({
  recipients: z.array(z.email()).min(1).max(20),
  smtp_url: z
    .string()
    .regex(/^smtps?:\/\/\S+$/, 'An smtp:// or smtps:// URL.')
    .max(2048)
    .optional()
    .describe("Write-only: this integration's own SMTP server (default: the SMTP_URL setting)."),
  from: z.string().min(3).max(255).optional().describe('Sender (default: the SMTP_FROM setting).'),
});

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const colors = { down: '#e01e5a', up: '#2eb67d', info: '#5865f2' } as const;

/** Subject, plain text and HTML of one notification email. */
export function emailContent(n: Parameters<typeof render>[0]) {
  const r = render(n);
  const text = [r.text, '', ...r.fields.map((f) => `${f.label}: ${f.value}`), '', r.footer].join('\n');
  const rows = r.fields
    .map((f) => `<tr><th align="left" style="padding:2px 12px 2px 0">${esc(f.label)}</th><td>${esc(f.value)}</td></tr>`)
    .join('');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="color:${colors[r.tone]}">${esc(r.title)}</h2>`,
    `<p>${esc(r.text)}</p>`,
    rows ? `<table>${rows}</table>` : '',
    `<p style="color:#888;font-size:small">${esc(r.footer)}</p>`,
    '</body></html>',
  ].join('');
  return { subject: `${toneIcon[r.tone]} ${r.title}`, text, html };
}

/** SMTP replies 5xx mean "never"; authentication and address errors will not pass by themselves either. */
function classify(err: unknown): DeliveryError {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const permanent = (e.responseCode !== undefined && e.responseCode >= 500) || e.code === 'EAUTH' || e.code === 'EENVELOPE';
  const what = e.responseCode ? `SMTP ${e.responseCode}` : (e.code ?? 'SMTP error');
  return new DeliveryError(`${what}: ${(e.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 300)}`, { permanent });
}

/**
 * The URL with its host replaced by the checked address to dial, and the name kept for TLS (SNI
 * and certificate checks); the URL as is when nothing is blocked.
 */
async function pinned(url: string, http: HttpClient): Promise<{ url: string; servername?: string }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DeliveryError('the SMTP URL is not valid', { permanent: true });
  }
  const address = await http.pinAddress(parsed.hostname);
  if (address === undefined) return { url };
  const name = parsed.hostname.replace(/^\[|\]$/g, '');
  parsed.hostname = isIPv6(address) ? `[${address}]` : address;
  return { url: parsed.toString(), ...(isIP(name) ? {} : { servername: name }) };
}

export const email: ChannelSpec<typeof EmailConfig> = {
  type: 'email',
  config: EmailConfig,
  secrets: ['smtp_url'],
  create: ({ smtp, http }) => ({
    async send({ id, notification, config }) {
      const url = config.smtp_url ?? smtp.url;
      if (!url) throw new DeliveryError("no SMTP server: set SMTP_URL or the integration's smtp_url", { permanent: true });
      // A tenant's own server is held to BLOCK_PRIVATE_TARGETS like any URL they give; the
      // operator's SMTP_URL (often a relay on localhost) is not.
      const target = config.smtp_url ? await pinned(config.smtp_url, http) : { url };
      const transport = nodemailer.createTransport({
        ...target,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      });
      try {
        await transport.sendMail({
          from: config.from ?? smtp.from,
          to: config.recipients,
          ...emailContent(notification),
          // The delivery id as Message-ID lets a mail system drop a repeat of the same delivery.
          messageId: `<${id}@uptime.notify>`,
          headers: { 'X-Uptime-Delivery': id, 'X-Uptime-Event': notification.event },
        });
      } catch (err) {
        throw classify(err);
      } finally {
        transport.close();
      }
    },
  }),
};
