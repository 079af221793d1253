import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a subscriber's signed link does: confirm the subscription, or end it. */
export type SubscriberPurpose = 'confirm' | 'unsubscribe';

/** The signature: HMAC-SHA256 of purpose and subscriber id under the subscriber-links key, base64url (43 characters). */
export function signSubscriber(key: Buffer, purpose: SubscriberPurpose, id: string): string {
  return createHmac('sha256', key).update(`subscriber-${purpose}:${id.toLowerCase()}`).digest('base64url');
}

/** Whether `sig` is the signature of this purpose and subscriber (in constant time). */
export function verifySubscriber(key: Buffer, purpose: SubscriberPurpose, id: string, sig: unknown): boolean {
  if (typeof sig !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  return timingSafeEqual(Buffer.from(signSubscriber(key, purpose, id)), Buffer.from(sig));
}

/**
 * A subscriber's link: made when a message is sent, from the id alone, so it is never stored.
 * A GET shows a page with the one button; a POST acts (a mail scanner following links changes
 * nothing). The unsubscribe link also takes RFC 8058's one-click POST.
 */
export function subscriberLink(key: Buffer, publicUrl: string, purpose: SubscriberPurpose, id: string): string {
  return `${publicUrl}/status/subscriptions/${id}/${purpose}?sig=${signSubscriber(key, purpose, id)}`;
}
