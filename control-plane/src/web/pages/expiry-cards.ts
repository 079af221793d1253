import type { Monitor } from '../../monitors/schemas.ts';
import { fromNow, timeTag } from '../components.ts';
import { html, type Html } from '../html.ts';

const DAY_MS = 86_400_000;

/** "12 days", "less than a day", "expired 3 days ago": whole days, as the warnings count them. */
function daysText(daysLeft: number): string {
  const days = Math.floor(Math.abs(daysLeft));
  if (daysLeft >= 0 && days === 0) return 'less than a day';
  const n = `${days} day${days === 1 ? '' : 's'}`;
  return daysLeft < 0 ? `expired ${n} ago` : n;
}

/** Expired, or inside the most distant warning: a pill says so beside the days left. */
function urgency(daysLeft: number, thresholds: readonly number[]): Html | '' {
  if (daysLeft < 0) return html` <span class="pill down">Expired</span>`;
  if (thresholds.length > 0 && daysLeft <= Math.max(...thresholds)) return html` <span class="pill late">Expires soon</span>`;
  return '';
}

/** A date as its day (2030-06-11), the exact instant on hover. */
const dayTag = (iso: string) => timeTag(iso, iso.slice(0, 10));

/** Warnings at these days, or that they are off. */
const warnsAt = (thresholds: readonly number[]) =>
  thresholds.length > 0 ? `${thresholds.join(', ')} days before` : html`<span class="faint">off</span>`;

function certificateCard(m: Monitor): Html | '' {
  const c = m.certificate;
  if (!c) return '';
  return html`<div class="card" data-testid="certificate">
    <div class="card-head"><h2>Certificate</h2></div>
    <div class="card-body">
      <dl class="facts">
        <dt>Valid until</dt>
        <dd>${dayTag(c.valid_to)}</dd>
        <dt>Days left</dt>
        <dd>${daysText(c.days_left)}${urgency(c.days_left, m.certificate_expiry_days)}</dd>
        <dt>Issuer</dt>
        <dd>${c.issuer || html`<span class="faint">–</span>`}</dd>
        <dt>Subject</dt>
        <dd>${c.subject || html`<span class="faint">–</span>`}</dd>
        <dt>Names</dt>
        <dd>${c.sans.length > 0 ? c.sans.join(', ') : html`<span class="faint">none</span>`}</dd>
        <dt>Warnings</dt>
        <dd>${warnsAt(m.certificate_expiry_days)}</dd>
      </dl>
    </div>
  </div>`;
}

function domainCard(m: Monitor, now: Date): Html | '' {
  const d = m.domain;
  if (!d) return '';
  const daysLeft = d.expires_at === null ? null : (Date.parse(d.expires_at) - now.getTime()) / DAY_MS;
  return html`<div class="card" data-testid="domain">
    <div class="card-head"><h2>Domain</h2></div>
    <div class="card-body">
      <dl class="facts">
        <dt>Domain</dt>
        <dd><code>${d.name}</code></dd>
        <dt>Registered until</dt>
        <dd>
          ${
            d.expires_at !== null && daysLeft !== null
              ? html`${dayTag(d.expires_at)} (${daysText(daysLeft)})${urgency(daysLeft, m.domain_expiry_days)}`
              : html`<span class="faint">${d.checked_at ? 'the registry publishes no date' : 'not looked up yet (once a day)'}</span>`
          }
        </dd>
        <dt>Registrar</dt>
        <dd>${d.registrar ?? html`<span class="faint">–</span>`}</dd>
        <dt>Looked up</dt>
        <dd>${timeTag(d.checked_at, fromNow(d.checked_at, now, 'not yet'))}</dd>
        ${
          d.error
            ? html`<dt>Last lookup</dt>
                <dd class="error-text">${d.error}</dd>`
            : ''
        }
        <dt>Warnings</dt>
        <dd>${warnsAt(m.domain_expiry_days)}</dd>
      </dl>
    </div>
  </div>`;
}

/**
 * The certificate the checks last saw and the domain's registration, each in a card when the
 * monitor has one (a TLS check; a registrable domain), with how soon it runs out.
 */
export function expiryCards(m: Monitor, now: Date): Html | '' {
  const cards = [certificateCard(m), domainCard(m, now)].filter((c) => c !== '');
  return cards.length === 0 ? '' : html`<div class="two-col">${cards}</div>`;
}
