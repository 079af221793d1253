import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Notification } from '../../../shared/src/contracts/notify.ts';

/** The kinds of domain events that notify anyone; the others (late, started, fired) do not. */

export type Tone = 'down' | 'up' | 'info';

/** A notification as every channel lays it out: a title, the message, labelled facts, a link. */
export interface Rendered {
  title: string;
  text: string;
  tone: Tone;
  fields: { label: string; value: string }[];
  link?: string;
  footer: string;
}

/** "45s", "5m 3s", "2h 1m", "3d 4h". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 86_400), 'd'],
    [Math.floor((s % 86_400) / 3_600), 'h'],
    [Math.floor((s % 3_600) / 60), 'm'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first === -1) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join(' ');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

const heartbeatReasons: Record<string, string> = {
  missed: 'no ping arrived within the grace period',
  failed: 'the job reported a failure',
  start_timeout: 'the job started but did not finish within the grace period',
};

function causeOf(data: Record<string, unknown>): string | undefined {
  const reason = str(data.reason);
  const exitCode = num((data.ping as { exit_code?: unknown } | undefined)?.exit_code);
  if (reason && Object.hasOwn(heartbeatReasons, reason))
    return `${heartbeatReasons[reason]}${reason === 'failed' && exitCode !== undefined ? ` (exit code ${exitCode})` : ''}`;
  return str(data.cause) ?? reason ?? str(data.error);
}

/** The one-line message of a domain event, in the words every channel shows. */
export function messageFor(e: Pick<DomainEvent, 'kind' | 'subject' | 'data'>): string {
  const name = e.subject.name;
  const duration = num(e.data.duration_seconds);
  const after = duration !== undefined ? ` after ${formatDuration(duration)}` : '';
  switch (e.kind) {
    case 'monitor.down': {
      const regions = list(e.data.regions);
      return `Monitor "${name}" is down: ${causeOf(e.data) ?? 'checks are failing'}.${regions.length > 0 ? ` Failing regions: ${regions.join(', ')}.` : ''}`;
    }
    case 'monitor.up':
      return `Monitor "${name}" is up again${after}.`;
    case 'heartbeat.down':
      return `Heartbeat "${name}" is down: ${causeOf(e.data) ?? heartbeatReasons.missed}.`;
    case 'heartbeat.up':
      return `Heartbeat "${name}" is up again${after}.`;
    default:
      return `${name}: ${e.kind}`;
  }
}

export function notificationFromEvent(e: DomainEvent, project: { id: string; name: string }): Notification {
  return {
    id: e.id,
    event: e.kind,
    message: messageFor(e),
    occurred_at: e.occurred_at,
    project,
    subject: e.subject,
    data: e.data,
  };
}

export function render(n: Notification): Rendered {
  const d = n.data;
  const fields: Rendered['fields'] = [];
  const add = (label: string, value: string | undefined) => {
    if (value !== undefined && value !== '') fields.push({ label, value });
  };
  const name = n.subject.name;
  const tone: Tone = n.event.endsWith('.down') ? 'down' : n.event.endsWith('.up') ? 'up' : 'info';
  let title = name;
  if (n.subject.type === 'monitor' || n.subject.type === 'heartbeat') {
    const what = n.subject.type === 'monitor' ? 'Monitor' : 'Heartbeat';
    title = tone === 'down' ? `${what} ${name} is down` : tone === 'up' ? `${what} ${name} is up` : `${what} ${name}`;
    add('URL', str(d.url));
    add('Regions', list(d.regions).join(', '));
    if (tone === 'down') add('Cause', causeOf(d));
    const duration = num(d.duration_seconds);
    if (duration !== undefined) add('Down for', formatDuration(duration));
    add('Down since', str(d.started_at) ?? str(d.down_since));
    add('Last ping', str(d.last_ping_at));
    if (tone === 'down') add('Next expected', str(d.next_ping_at));
  } else if (n.event === 'integration.test') {
    title = 'Test notification';
  }
  const link = str(d.url);
  return {
    title,
    text: n.message,
    tone,
    fields,
    ...(link && /^https?:\/\//.test(link) ? { link } : {}),
    footer: `Project ${n.project.name} · ${n.occurred_at}`,
  };
}
