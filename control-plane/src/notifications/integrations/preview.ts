import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { messageFor } from '../content.ts';
import type { Outbound } from '../channels/types.ts';
import type { OutboundView } from './schemas.ts';

export const REDACTED = '[redacted]';

/** The fixed ids of the samples, so that nobody mistakes a sample's for a real one's. */
const SAMPLE_MONITOR = '00000000-0000-4000-8000-000000000001';
const SAMPLE_ALERT = '00000000-0000-4000-8000-000000000002';

export interface SampleTarget {
  id: string;
  name: string;
  project: { id: string; name: string };
}

/**
 * What a preview or a test send words: a sample outage of a monitor (cause, regions, evidence,
 * down since, and sample action links, which lead to no real alert), or the test message.
 */
export function sampleNotification(
  event: 'monitor.down' | 'integration.test',
  id: string,
  target: SampleTarget,
  now: Date,
  publicUrl: string,
): Notification {
  if (event === 'integration.test') {
    return {
      id,
      event: 'integration.test',
      message: `Test message from uptime for the integration "${target.name}": if you read this, it works.`,
      occurred_at: now.toISOString(),
      project: target.project,
      subject: { type: 'integration', id: target.id, name: target.name },
      data: {},
    };
  }
  const startedAt = new Date(now.getTime() - 90_000).toISOString();
  const subject = { type: 'monitor' as const, id: SAMPLE_MONITOR, name: 'Sample monitor' };
  const data = {
    url: 'https://shop.example.com/health',
    regions: ['eu-west', 'us-east'],
    cause: 'HTTP 503 (expected 200-299)',
    incident_id: '00000000-0000-4000-8000-000000000003',
    started_at: startedAt,
    evidence: [
      { region: 'ap-south', ok: true, status_code: 200, error: null, total_ms: 143, scheduled_at: startedAt, abstained: false },
      { region: 'eu-west', ok: false, status_code: 503, error: null, total_ms: 812, scheduled_at: startedAt, abstained: false },
      { region: 'us-east', ok: false, status_code: 503, error: null, total_ms: 655, scheduled_at: startedAt, abstained: false },
    ],
  };
  return {
    id,
    event: 'monitor.down',
    message: messageFor({ kind: 'monitor.down', subject, data }),
    occurred_at: startedAt,
    project: target.project,
    subject,
    data,
    actions: {
      alert_id: SAMPLE_ALERT,
      acknowledge_url: `${publicUrl}/app/alerts/${SAMPLE_ALERT}/acknowledge?sig=sample`,
      snooze_url: `${publicUrl}/app/alerts/${SAMPLE_ALERT}/snooze?sig=sample`,
      view_url: `${publicUrl}/app/monitors/${SAMPLE_MONITOR}`,
    },
  };
}

/** An SMTP URL as shown: scheme, host and port, never the user or password. */
function smtpView(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return REDACTED;
  }
}

const escapedInJson = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * A request as it may be shown: every secret string of the integration taken out of its URL
 * (a secret URL keeps its scheme and host), headers that carry credentials (authorization, the
 * webhook's own headers, any holding a secret) replaced, secrets in the body replaced. A secret
 * shorter than 8 characters is only looked for where secrets go (URL, headers): elsewhere it
 * would match ordinary text.
 */
export function redact(out: Outbound, secrets: readonly string[], secretHeaders: readonly string[] = []): OutboundView {
  const all = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  const long = all.filter((s) => s.length >= 8);
  const scrub = (text: string, list: readonly string[]) => {
    let t = text;
    for (const s of list) {
      t = t.split(s).join(REDACTED);
      const e = escapedInJson(s);
      if (e !== s) t = t.split(e).join(REDACTED);
    }
    return t;
  };
  const named = new Set(['authorization', 'proxy-authorization', 'cookie', ...secretHeaders.map((h) => h.toLowerCase())]);
  const headers = Object.fromEntries(
    Object.entries(out.headers).map(([k, v]) => [
      k,
      named.has(k.toLowerCase()) || all.some((s) => v === s || (s.length >= 8 && v.includes(s))) ? REDACTED : v,
    ]),
  );
  if (out.kind === 'email') {
    return {
      kind: 'email',
      smtp_url: out.smtp_url === null ? null : smtpView(out.smtp_url),
      from: out.from,
      to: [...out.to],
      subject: scrub(out.subject, long),
      headers,
      text: scrub(out.text, long),
      html: scrub(out.html, long),
    };
  }
  let url = out.url;
  for (const s of all) {
    if (s.length < 4 || !url.includes(s)) continue;
    let shown = REDACTED;
    try {
      const u = new URL(s);
      if (/^https?:$/.test(u.protocol)) shown = `${u.protocol}//${u.host}/${REDACTED}`;
    } catch {
      // not a URL: the bare marker
    }
    url = url.split(s).join(shown);
  }
  return { kind: 'http', method: out.method, url, headers, body: scrub(out.body, long) };
}
