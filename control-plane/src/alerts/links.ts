import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AlertActions } from '../../../shared/src/contracts/notify.ts';

/** What a signed link lets its holder do: one action on one alert, or snoozing one heartbeat. */
export type LinkPurpose = 'acknowledge' | 'snooze' | 'heartbeat-snooze';

/** The signature of a link: HMAC-SHA256 of purpose and id under the alert-links key, base64url (43 characters). */
export function signLink(key: Buffer, purpose: LinkPurpose, id: string): string {
  return createHmac('sha256', key).update(`${purpose}:${id.toLowerCase()}`).digest('base64url');
}

/** Whether `sig` is the signature of this purpose and id (in constant time). */
export function verifyLink(key: Buffer, purpose: LinkPurpose, id: string, sig: unknown): boolean {
  if (typeof sig !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  return timingSafeEqual(Buffer.from(signLink(key, purpose, id)), Buffer.from(sig));
}

/**
 * The links a message about an open alert carries (ADR 0032): made when it is sent, from the
 * alert id alone, so they are never stored. A GET shows a page with the one button; a POST acts.
 */
export function alertActions(key: Buffer, publicUrl: string, alertId: string, subject: { type: string; id: string }): AlertActions {
  const base = `${publicUrl}/app/alerts/${alertId}`;
  return {
    alert_id: alertId,
    acknowledge_url: `${base}/acknowledge?sig=${signLink(key, 'acknowledge', alertId)}`,
    snooze_url: `${base}/snooze?sig=${signLink(key, 'snooze', alertId)}`,
    view_url: `${publicUrl}/app/${subject.type === 'monitor' ? 'monitors' : 'heartbeats'}/${subject.id}`,
  };
}

/** A heartbeat's snooze URL: `<ping URL>/snooze?minutes=N&sig=...` (on the control plane's ping base URL). */
export function heartbeatSnoozeUrl(key: Buffer, pingBaseUrl: string, heartbeatId: string): string {
  return `${pingBaseUrl}/heartbeat/${heartbeatId}/snooze?sig=${signLink(key, 'heartbeat-snooze', heartbeatId)}`;
}

/** The alert a notification is about, when it is one a person can act on. */
export function alertIdOf(n: { id: string; event: string; data: Record<string, unknown> }): string | null {
  if (n.event === 'monitor.down' || n.event === 'heartbeat.down') return n.id;
  if (n.event === 'monitor.settled' && n.data.status === 'down') return n.id;
  if ((n.event === 'alert.renotified' || n.event === 'alert.escalated') && typeof n.data.alert_id === 'string') return n.data.alert_id;
  return null;
}
