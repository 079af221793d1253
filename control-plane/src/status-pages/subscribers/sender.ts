import type { Logger } from '../../../../shared/src/logger.ts';
import { open } from '../../../../shared/src/crypto.ts';
import type { Sql } from '../../platform/db/sql.ts';
import { listenForWork } from '../../platform/db/wakeup.ts';
import { afterFailure, type Backoff } from '../../notifications/backoff.ts';
import { sendMail } from '../../notifications/channels/email.ts';
import { userAgent, type HttpClient } from '../../notifications/channels/http.ts';
import type { MailOut } from '../../notifications/channels/types.ts';
import { signWebhook } from '../../notifications/channels/webhook.ts';
import { asDeliveryError, DeliveryError, scrub } from '../../notifications/errors.ts';
import { subscriberLink } from './links.ts';
import * as repo from './repo.ts';
import { noticeEvent, noticeText, type NoticePage, type NoticePayload } from './rules.ts';

/** A webhook subscriber's sealed settings. */
export interface WebhookTarget {
  url: string;
  secret?: string | undefined;
}

export interface SenderOptions {
  sql: Sql;
  log: Logger;
  http: HttpClient;
  /** SMTP_URL (null: email subscribers cannot be written to) and SMTP_FROM. */
  smtp: { url: string | undefined; from: string };
  publicUrl: string;
  /** Signs the confirm and unsubscribe links. */
  linkKey: Buffer;
  /** Opens a webhook subscriber's URL and secret. */
  sealKey: Buffer;
  maxAttempts: number;
  backoff: Backoff;
  leaseMs: number;
  concurrency: number;
  pollMs: number;
  now?: () => Date;
}

export interface SenderStats {
  fannedOut: number;
  delivered: number;
  retried: number;
  dead: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Where a page is read: its own host name (behind TLS) when it has one, else its address on the service. */
export function pageAddresses(publicUrl: string, slug: string, domain: string | null): NoticePage & { base: string } {
  const base = domain ? `https://${domain}` : `${publicUrl}/status/${slug}`;
  return {
    title: '',
    base,
    url: domain ? `${base}/` : base,
    incidentUrl: (id) => (domain ? `${base}/status/${slug}/incidents/${id}` : `${base}/incidents/${id}`),
  };
}

/** The email a notice becomes for one subscriber: its words, the page's link, and a one-click unsubscribe (RFC 8058). */
export function noticeMail(opts: {
  deliveryId: string;
  payload: NoticePayload;
  page: NoticePage;
  unsubscribeUrl: string;
  to: string;
  from: string;
  smtpUrl: string | null;
}): MailOut {
  const t = noticeText(opts.payload, opts.page);
  const text = [
    ...t.lines,
    '',
    t.link,
    '',
    `You receive this because you subscribed to ${opts.page.title}.`,
    `Unsubscribe: ${opts.unsubscribeUrl}`,
  ].join('\n');
  const [head, meta, ...rest] = t.lines;
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${esc(head ?? '')}</h2>`,
    `<p style="color:#555">${esc(meta ?? '')}</p>`,
    `<p>${rest.map(esc).join('<br>')}</p>`,
    `<p><a href="${esc(t.link)}">${esc(t.link)}</a></p>`,
    `<p style="color:#888;font-size:small">You receive this because you subscribed to ${esc(opts.page.title)}. <a href="${esc(opts.unsubscribeUrl)}">Unsubscribe</a></p>`,
    '</body></html>',
  ].join('');
  return {
    kind: 'email',
    smtp_url: opts.smtpUrl,
    from: opts.from,
    to: [opts.to],
    subject: t.subject,
    text,
    html,
    headers: {
      // One Message-ID per delivery: a mail system drops a repeat of the same one.
      'Message-ID': `<${opts.deliveryId}@uptime.status>`,
      'List-Unsubscribe': `<${opts.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
      'X-Uptime-Delivery': opts.deliveryId,
    },
  };
}

/** The confirmation email of a subscription (double opt-in): nothing else is sent before it is confirmed. */
export function confirmationMail(opts: {
  deliveryId: string;
  pageTitle: string;
  pageUrl: string;
  confirmUrl: string;
  to: string;
  from: string;
  smtpUrl: string | null;
}): MailOut {
  const text = [
    `Someone, hopefully you, asked to receive the incident and maintenance updates of ${opts.pageTitle} (${opts.pageUrl}) at this address.`,
    '',
    `Confirm: ${opts.confirmUrl}`,
    '',
    'If it was not you, ignore this email: nothing will be sent to you, and the request is forgotten in a week.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>Someone, hopefully you, asked to receive the incident and maintenance updates of <a href="${esc(opts.pageUrl)}">${esc(opts.pageTitle)}</a> at this address.</p>`,
    `<p><a href="${esc(opts.confirmUrl)}" style="display:inline-block;padding:8px 16px;border-radius:4px;background:#1d4ed8;color:#ffffff;text-decoration:none;font-weight:bold">Confirm the subscription</a></p>`,
    '<p style="color:#888;font-size:small">If it was not you, ignore this email: nothing will be sent to you, and the request is forgotten in a week.</p>',
    '</body></html>',
  ].join('');
  return {
    kind: 'email',
    smtp_url: opts.smtpUrl,
    from: opts.from,
    to: [opts.to],
    subject: `Confirm your subscription to ${opts.pageTitle}`,
    text,
    html,
    headers: {
      'Message-ID': `<${opts.deliveryId}@uptime.status>`,
      'Auto-Submitted': 'auto-generated',
      'X-Uptime-Delivery': opts.deliveryId,
    },
  };
}

/**
 * The JSON a webhook subscriber receives: the same for every attempt (the delivery's id is its
 * Idempotency-Key), documented in docs/status-pages.md.
 */
export function noticeWebhookBody(noticeId: string, payload: NoticePayload, page: NoticePage): string {
  const base = { id: noticeId, event: noticeEvent(payload), occurred_at: payload.at, page: { title: page.title, url: page.url } };
  if (payload.kind === 'incident') {
    return JSON.stringify({
      ...base,
      incident: {
        id: payload.incident_id,
        title: payload.title,
        impact: payload.impact,
        status: payload.status,
        url: page.incidentUrl(payload.incident_id),
        components: payload.components,
        update: { id: payload.update_id, status: payload.status, message: payload.message, at: payload.at },
      },
    });
  }
  return JSON.stringify({
    ...base,
    maintenance: {
      id: payload.window_id,
      name: payload.name,
      description: payload.description,
      phase: payload.phase,
      starts_at: payload.starts_at,
      ends_at: payload.ends_at,
      components: payload.components,
    },
  });
}

/**
 * The subscriber sender of one notify process: notices are fanned out into one delivery per
 * confirmed subscriber, and deliveries are claimed, sent and recorded like alert deliveries
 * (ADR 0023): the tables are the queues, a claim is a lease (a process that dies frees it when it
 * runs out), each delivery is sent under its own id so a repeat after a lost record can be
 * dropped by the receiver, failures back off and end dead after NOTIFY_MAX_ATTEMPTS.
 */
export interface SubscriberSender {
  stop(): Promise<void>;
  stats(): SenderStats;
  /** Fans out and claims what is due now; the notices and deliveries found. */
  runOnce(): Promise<number>;
}

export function startSubscriberSender(opts: SenderOptions): SubscriberSender {
  const log = opts.log.child({ component: 'subscriber-sender' });
  const now = opts.now ?? (() => new Date());
  const counters: SenderStats = { fannedOut: 0, delivered: 0, retried: 0, dead: 0 };
  const wakeup = listenForWork(opts.sql, 'subscriber_work', log);
  const retryTimers = new Set<NodeJS.Timeout>();

  const messageOf = async (d: repo.ClaimedMessage): Promise<{ send: () => Promise<void>; secrets: string[] }> => {
    const page = { ...pageAddresses(opts.publicUrl, d.page_slug, d.page_domain), title: d.page_title };
    if (d.kind === 'email') {
      const smtpUrl = opts.smtp.url ?? null;
      const mail =
        d.purpose === 'confirm'
          ? confirmationMail({
              deliveryId: d.id,
              pageTitle: d.page_title,
              pageUrl: page.url,
              confirmUrl: subscriberLink(opts.linkKey, opts.publicUrl, 'confirm', d.subscriber_id),
              to: d.email!,
              from: opts.smtp.from,
              smtpUrl,
            })
          : noticeMail({
              deliveryId: d.id,
              payload: d.payload!,
              page,
              unsubscribeUrl: subscriberLink(opts.linkKey, opts.publicUrl, 'unsubscribe', d.subscriber_id),
              to: d.email!,
              from: opts.smtp.from,
              smtpUrl,
            });
      return { send: () => sendMail(mail), secrets: [] };
    }
    if (d.purpose !== 'notice' || d.payload === null) throw new DeliveryError('nothing to send to a webhook', { permanent: true });
    const target = JSON.parse(open(d.webhook_sealed!, opts.sealKey)) as WebhookTarget;
    const body = noticeWebhookBody(d.notice_id!, d.payload, page);
    const timestamp = String(Math.floor(now().getTime() / 1000));
    const headers: Record<string, string> = {
      'user-agent': userAgent,
      'content-type': 'application/json',
      'idempotency-key': d.id,
      'x-uptime-delivery': d.id,
      'x-uptime-event': noticeEvent(d.payload),
      'x-uptime-timestamp': timestamp,
      ...(target.secret ? { 'x-uptime-signature': signWebhook(target.secret, timestamp, body) } : {}),
    };
    return {
      send: async () => {
        await opts.http.post(target.url, { body, headers });
      },
      secrets: [target.url, ...(target.secret ? [target.secret] : [])],
    };
  };

  const attempt = async (d: repo.ClaimedMessage) => {
    const dlog = log.child({ deliveryId: d.id, subscriberId: d.subscriber_id, kind: d.kind, purpose: d.purpose, attempt: d.attempts });
    let secrets: string[] = [];
    try {
      const m = await messageOf(d);
      secrets = m.secrets;
      await m.send();
    } catch (err) {
      const failure = asDeliveryError(err);
      const error = scrub(failure.message, secrets);
      const next = afterFailure(d.attempts, opts.maxAttempts, failure, opts.backoff);
      if (next.kind === 'dead') {
        await repo.markDead(opts.sql, d.id, d.attempts, error);
        counters.dead++;
        dlog.warn({ error }, 'subscriber delivery dead');
      } else {
        await repo.markRetry(opts.sql, d.id, d.attempts, error, next.delayMs);
        counters.retried++;
        dlog.info({ error, delayMs: next.delayMs }, 'subscriber delivery failed; retrying');
        const timer = setTimeout(() => {
          retryTimers.delete(timer);
          wakeup.wake();
        }, next.delayMs);
        retryTimers.add(timer);
      }
      return;
    }
    // Sent: a record lost here (the database away) lets the claim run out, and the delivery is
    // sent again under the same id.
    await repo.markDelivered(opts.sql, [d.id]);
    counters.delivered++;
    dlog.info('subscriber delivery sent');
  };

  const inFlight = new Set<Promise<void>>();
  const runOnce = async (): Promise<number> => {
    const fanned = await repo.fanOut(opts.sql, 5);
    counters.fannedOut += fanned.deliveries;
    const room = opts.concurrency - inFlight.size;
    if (room <= 0) return fanned.notices;
    const claimed = await repo.claimDue(opts.sql, room, opts.leaseMs);
    for (const d of claimed) {
      const p: Promise<void> = attempt(d)
        .catch((err: unknown) =>
          log.error({ err, deliveryId: d.id }, 'subscriber delivery not recorded; it is sent again once its claim runs out'),
        )
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    return fanned.notices + claimed.length;
  };

  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      if (inFlight.size >= opts.concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      let found = 0;
      try {
        found = await runOnce();
      } catch (err) {
        log.warn({ err }, 'subscriber queue not read; trying again');
      }
      if (found === 0 && !stopped) await wakeup.wait(opts.pollMs);
    }
    await Promise.allSettled([...inFlight]);
  })();

  return {
    stats: () => ({ ...counters }),
    runOnce,
    async stop() {
      stopped = true;
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      await wakeup.close();
      await loop;
    },
  };
}
