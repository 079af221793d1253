import { isIP, isIPv6 } from 'node:net';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { DeliveryError } from '../errors.ts';
import { compose, type MessageTemplate } from '../templates.ts';
import type { HttpClient } from './http.ts';
import { actionLinks, channel, toneIcon, type ChannelSpec, type MailOut } from './types.ts';

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

const button = (primary: boolean) =>
  `display:inline-block;padding:8px 16px;margin:0 8px 8px 0;border-radius:4px;text-decoration:none;font-weight:bold;${
    primary ? 'background:#1d4ed8;color:#ffffff' : 'background:#e5e7eb;color:#111827'
  }`;

/**
 * Subject, plain text and HTML of one notification email. The action links are buttons in the
 * HTML part and lines in the text part. A template is plain text here: the HTML part shows it
 * escaped, line breaks kept.
 */
export function emailContent(n: Notification, template?: MessageTemplate | null) {
  const m = compose(n, template);
  const r = m.r;
  const title = m.title();
  const body = m.text();
  const links = actionLinks(n);
  const text = [
    body,
    '',
    ...r.fields.map((f) => `${f.label}: ${f.value}`),
    ...(links.length > 0 ? ['', ...links.map((l) => `${l.label}: ${l.url}`)] : []),
    '',
    r.footer,
  ].join('\n');
  const rows = r.fields
    .map((f) => `<tr><th align="left" style="padding:2px 12px 2px 0">${esc(f.label)}</th><td>${esc(f.value)}</td></tr>`)
    .join('');
  const buttons = links.map((l) => `<a href="${esc(l.url)}" style="${button(l.key === 'acknowledge')}">${esc(l.label)}</a>`).join('');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="color:${colors[r.tone]}">${esc(title)}</h2>`,
    `<p>${template?.body ? esc(body).replace(/\r?\n/g, '<br>') : esc(body)}</p>`,
    rows ? `<table>${rows}</table>` : '',
    buttons ? `<p style="margin-top:16px">${buttons}</p>` : '',
    `<p style="color:#888;font-size:small">${esc(r.footer)}</p>`,
    '</body></html>',
  ].join('');
  return { subject: `${toneIcon[r.tone]} ${title}`, text, html };
}

/**
 * The server's reply decides when there is one: 5xx means "never", 4xx "later" (a recipient
 * greylisted or a mailbox over quota, refused with 451 or 452, gets it on a later attempt).
 * Without a reply, authentication and address errors will not pass by themselves.
 */
function classify(err: unknown): DeliveryError {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const permanent = e.responseCode !== undefined ? e.responseCode >= 500 : e.code === 'EAUTH' || e.code === 'EENVELOPE';
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

/**
 * Sends one email through its SMTP server, a DeliveryError when it fails. With `http`, the server
 * is a tenant's own and is dialled at an address the address policy allows (BLOCK_PRIVATE_TARGETS).
 */
export async function sendMail(mail: MailOut, http?: HttpClient): Promise<void> {
  if (!mail.smtp_url) throw new DeliveryError("no SMTP server: set SMTP_URL or the integration's smtp_url", { permanent: true });
  const target = http ? await pinned(mail.smtp_url, http) : { url: mail.smtp_url };
  const transport = nodemailer.createTransport({
    ...target,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  const { 'Message-ID': messageId, ...headers } = mail.headers;
  try {
    await transport.sendMail({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId,
      headers,
    });
  } catch (err) {
    throw classify(err);
  } finally {
    transport.close();
  }
}

export const email: ChannelSpec<typeof EmailConfig> = {
  type: 'email',
  config: EmailConfig,
  secrets: ['smtp_url'],
  create: ({ smtp, http }) =>
    channel({
      build: ({ id, notification, config, template }): MailOut[] => [
        {
          kind: 'email',
          smtp_url: config.smtp_url ?? smtp.url ?? null,
          from: config.from ?? smtp.from,
          to: config.recipients,
          ...emailContent(notification, template),
          // The delivery id as Message-ID lets a mail system drop a repeat of the same delivery.
          headers: { 'Message-ID': `<${id}@uptime.notify>`, 'X-Uptime-Delivery': id, 'X-Uptime-Event': notification.event },
        },
      ],
      async transmit(out, { config }) {
        for (const mail of out) {
          if (mail.kind !== 'email') throw new Error('the email channel built an HTTP request');
          // A tenant's own server is held to BLOCK_PRIVATE_TARGETS like any URL they give; the
          // operator's SMTP_URL (often a relay on localhost) is not.
          await sendMail(mail, config.smtp_url ? http : undefined);
        }
      },
    }),
};
