import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import type { Notification } from '../../../shared/src/contracts/notify.ts';
import { evidenceSummary } from './evidence.ts';

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
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * "expires in 9 days (on 2030-01-10)": whole days, never more than are left (9.6 days left is 9);
 * "expires within a day", "expired on" past it.
 */
export function expiresIn(daysLeft: number | undefined, at: string | undefined): string {
  const on = at ? at.slice(0, 10) : undefined;
  if (daysLeft === undefined) return on ? `expires on ${on}` : 'expires soon';
  if (daysLeft < 0) return on ? `expired on ${on}` : 'has expired';
  const days = Math.floor(daysLeft);
  const when = days < 1 ? 'within a day' : `in ${days} day${days === 1 ? '' : 's'}`;
  return `expires ${when}${on ? ` (on ${on})` : ''}`;
}

const heartbeatReasons: Record<string, string> = {
  missed: 'no ping arrived within the grace period',
  failed: 'the job reported a failure',
  output: "the job's output matched a failure rule",
  too_short: 'the job finished sooner than its minimum run time',
  too_frequent: 'the job ran again too soon after its last success',
  too_long: 'the job started but did not finish within its maximum run time',
  start_timeout: 'the job started but did not finish within the grace period',
};

/** "ran 4.2 s" for a ping that closed a run. */
function runText(ping: { run_duration_seconds?: unknown } | undefined): string {
  const seconds = num(ping?.run_duration_seconds);
  if (seconds === undefined) return '';
  return ` (ran ${seconds < 60 ? `${Math.round(seconds * 10) / 10} s` : `${Math.round(seconds / 60)} min`})`;
}

export function causeOf(data: Record<string, unknown>): string | undefined {
  const reason = str(data.reason);
  const ping = data.ping as { exit_code?: unknown; run_duration_seconds?: unknown } | undefined;
  const exitCode = num(ping?.exit_code);
  if (reason && Object.hasOwn(heartbeatReasons, reason))
    return `${heartbeatReasons[reason]}${reason === 'failed' && exitCode !== undefined ? ` (exit code ${exitCode})` : ''}${
      reason === 'too_short' ? runText(ping) : ''
    }`;
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
    case 'monitor.regional_down': {
      const regions = list(e.data.regions);
      return `Monitor "${name}" is failing in ${regions.length > 0 ? regions.join(', ') : 'some regions'} (fewer regions than its quorum: it is up elsewhere): ${causeOf(e.data) ?? 'checks are failing'}.`;
    }
    case 'monitor.regional_up':
      return `Monitor "${name}" passes in every region again${after}.`;
    case 'monitor.degraded': {
      const regions = list(e.data.regions);
      return `Monitor "${name}" is degraded (up, but ${causeOf(e.data) ?? 'a degraded condition fails'})${regions.length > 0 ? ` in ${regions.join(', ')}` : ''}.`;
    }
    case 'monitor.restored':
      return `Monitor "${name}" performs normally again${after}.`;
    case 'monitor.flapping':
      return `Monitor "${name}" is flapping: ${num(e.data.changes) ?? 'many'} changes within ${formatDuration(num(e.data.window_seconds) ?? 0)}; it is ${e.data.status === 'down' ? 'down' : 'up'} now. Its changes are not sent one by one until it settles.`;
    case 'monitor.settled':
      return `Monitor "${name}" has stopped flapping and is ${e.data.status === 'down' ? 'down' : 'up'}.`;
    case 'monitor.certificate_expiring': {
      const c = record(e.data.certificate);
      return `Certificate of "${name}" ${expiresIn(num(c.days_left), str(c.valid_to))}.`;
    }
    case 'monitor.domain_expiring': {
      const d = record(e.data.domain);
      const domain = str(d.name);
      return `Domain ${domain ? `${domain} ` : ''}of "${name}" ${expiresIn(num(d.days_left), str(d.expires_at))}.`;
    }
    case 'heartbeat.down':
      return `Heartbeat "${name}" is down: ${causeOf(e.data) ?? heartbeatReasons.missed}.`;
    case 'heartbeat.up':
      return `Heartbeat "${name}" is up again${after}.`;
    case 'alert.renotified':
    case 'alert.escalated': {
      const what = e.subject.type === 'monitor' ? 'Monitor' : 'Heartbeat';
      const since = str(e.data.opened_at);
      const minutes = num(e.data.unacknowledged_minutes);
      const open = minutes !== undefined ? ` for ${formatDuration(minutes * 60)}` : '';
      const lead = e.kind === 'alert.escalated' ? 'Escalated: no one has acknowledged it. ' : 'Reminder: ';
      return `${lead}${what} "${name}" is still down${open}${since ? ` (since ${since})` : ''}: ${causeOf(e.data) ?? 'checks are failing'}.`;
    }
    case 'alert.acknowledged':
      return `The alert of ${e.subject.type} "${name}" was acknowledged${str(e.data.by) ? ` by ${str(e.data.by)}` : ''}: no more reminders or escalation.`;
    case 'alert.snoozed':
      return `The alert of ${e.subject.type} "${name}" was snoozed${str(e.data.by) ? ` by ${str(e.data.by)}` : ''} until ${str(e.data.until) ?? '?'}.`;
    case 'monitor.snoozed':
    case 'heartbeat.snoozed':
      return str(e.data.until)
        ? `${e.kind === 'monitor.snoozed' ? 'Monitor' : 'Heartbeat'} "${name}" was snoozed${str(e.data.by) ? ` by ${str(e.data.by)}` : ''} until ${str(e.data.until)}: its alerts wait until then.`
        : `${e.kind === 'monitor.snoozed' ? 'Monitor' : 'Heartbeat'} "${name}" is no longer snoozed${str(e.data.by) ? ` (${str(e.data.by)})` : ''}.`;
    case 'integration.failing':
      return `Integration "${name}" keeps failing: ${num(e.data.failures) ?? 'several'} attempts in a row since ${str(e.data.failing_since) ?? '?'} (last error: ${str(e.data.last_error) ?? 'unknown'}). Its messages are not getting through.`;
    case 'integration.recovered':
      return `Integration "${name}" delivers again.`;
    default:
      return `${name}: ${e.kind}`;
  }
}

/** The names a grouped message lists (the first 50, then how many more). */
export const GROUP_LISTED = 50;

function groupedNames(alerts: readonly { subject?: { name?: unknown } }[], count: number): string {
  const names = alerts.slice(0, GROUP_LISTED).map((a) => (typeof a.subject?.name === 'string' ? a.subject.name : '?'));
  return `${names.join(', ')}${count > names.length ? ` and ${count - names.length} more` : ''}`;
}

/**
 * One message for several monitor alerts of a project (all downs, or all ups) that occurred
 * within its grouping window (ADR 0030); `id` is the group's own (stable for the group).
 */
export function groupedNotification(
  id: string,
  project: { id: string; name: string },
  events: readonly DomainEvent[],
  windowSeconds: number,
): Notification {
  const status = events[0]!.kind.endsWith('.down') ? 'down' : 'up';
  const listed = events.slice(0, GROUP_LISTED);
  return {
    id,
    event: 'alerts.grouped',
    message: `${events.length} monitors of project "${project.name}" are ${status}: ${groupedNames(listed, events.length)}.`,
    occurred_at: events[0]!.occurred_at,
    project,
    subject: { type: 'project', id: project.id, name: project.name },
    data: {
      status,
      count: events.length,
      window_seconds: windowSeconds,
      alerts: listed.map((e) => ({
        id: e.id,
        event: e.kind,
        occurred_at: e.occurred_at,
        subject: e.subject,
        message: messageFor(e),
        ...(typeof e.data.url === 'string' ? { url: e.data.url } : {}),
        ...(typeof e.data.incident_id === 'string' ? { incident_id: e.data.incident_id } : {}),
      })),
    },
  };
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
  const tone: Tone =
    n.event.endsWith('.down') ||
    n.event === 'monitor.regional_down' ||
    n.event === 'monitor.degraded' ||
    n.event === 'alert.renotified' ||
    n.event === 'alert.escalated' ||
    n.event === 'integration.failing'
      ? 'down'
      : n.event.endsWith('.up') ||
          n.event === 'monitor.regional_up' ||
          n.event === 'monitor.restored' ||
          n.event === 'integration.recovered'
        ? 'up'
        : n.event === 'monitor.settled' || n.event === 'alerts.grouped'
          ? d.status === 'down'
            ? 'down'
            : 'up'
          : 'info';
  let title = name;
  if (n.event === 'alerts.grouped') {
    const alerts = Array.isArray(d.alerts) ? (d.alerts as { subject?: { name?: unknown }; occurred_at?: unknown }[]) : [];
    title = `${num(d.count) ?? alerts.length} monitors are ${tone === 'down' ? 'down' : 'up'}`;
    add('Monitors', groupedNames(alerts, num(d.count) ?? alerts.length));
    add('Project', n.project.name);
  } else if (n.event === 'monitor.flapping' || n.event === 'monitor.settled') {
    title = n.event === 'monitor.flapping' ? `Monitor ${name} is flapping` : `Monitor ${name} has settled`;
    add('URL', str(d.url));
    add('Now', d.status === 'down' ? 'down' : 'up');
    add('Flapping since', str(d.flapping_since));
  } else if (n.event === 'monitor.regional_down' || n.event === 'monitor.regional_up') {
    title = tone === 'down' ? `Monitor ${name} is failing in some regions` : `Monitor ${name} passes in every region again`;
    add('URL', str(d.url));
    add('Regions', list(d.regions).join(', '));
    if (tone === 'down') add('Cause', causeOf(d));
    if (tone === 'down') add('Evidence', evidenceSummary(d));
    if (tone === 'down') add('Failing since', str(d.started_at));
    const duration = num(d.duration_seconds);
    if (duration !== undefined) add('For', formatDuration(duration));
  } else if (n.event === 'monitor.degraded' || n.event === 'monitor.restored') {
    title = tone === 'down' ? `Monitor ${name} is degraded` : `Monitor ${name} performs normally again`;
    add('URL', str(d.url));
    add('Regions', list(d.regions).join(', '));
    if (tone === 'down') add('Cause', causeOf(d));
    if (tone === 'down') add('Degraded since', str(d.started_at));
    const duration = num(d.duration_seconds);
    if (duration !== undefined) add('For', formatDuration(duration));
  } else if (n.event === 'monitor.certificate_expiring') {
    const c = record(d.certificate);
    title = `Certificate of ${name} ${(num(c.days_left) ?? 0) < 0 ? 'has expired' : 'expires soon'}`;
    add('URL', str(d.url));
    add('Valid until', str(c.valid_to));
    add('Issuer', str(c.issuer));
    add('Names', list(c.sans).join(', '));
  } else if (n.event === 'monitor.domain_expiring') {
    const dm = record(d.domain);
    title = `Domain of ${name} ${(num(dm.days_left) ?? 0) < 0 ? 'has expired' : 'expires soon'}`;
    add('Domain', str(dm.name));
    add('Registered until', str(dm.expires_at));
    add('Registrar', str(dm.registrar));
    add('URL', str(d.url));
  } else if (n.event === 'alert.renotified' || n.event === 'alert.escalated') {
    const what = n.subject.type === 'monitor' ? 'Monitor' : 'Heartbeat';
    title = n.event === 'alert.escalated' ? `Escalated: ${what} ${name} is down` : `${what} ${name} is still down`;
    add('URL', str(d.url));
    add('Regions', list(d.regions).join(', '));
    add('Cause', causeOf(d));
    add('Down since', str(d.opened_at));
    const minutes = num(d.unacknowledged_minutes);
    if (minutes !== undefined) add('Unacknowledged for', formatDuration(minutes * 60));
  } else if (n.event === 'alert.acknowledged' || n.event === 'alert.snoozed') {
    title = n.event === 'alert.acknowledged' ? `Acknowledged: ${name}` : `Snoozed: ${name}`;
    add('By', str(d.by));
    add('Until', str(d.until));
    add('Down since', str(d.opened_at));
  } else if (n.event === 'monitor.snoozed' || n.event === 'heartbeat.snoozed') {
    title = str(d.until) ? `Snoozed: ${name}` : `Snooze ended: ${name}`;
    add('By', str(d.by));
    add('Until', str(d.until));
  } else if (n.subject.type === 'monitor' || n.subject.type === 'heartbeat') {
    const what = n.subject.type === 'monitor' ? 'Monitor' : 'Heartbeat';
    title = tone === 'down' ? `${what} ${name} is down` : tone === 'up' ? `${what} ${name} is up` : `${what} ${name}`;
    add('URL', str(d.url));
    add('Regions', list(d.regions).join(', '));
    if (tone === 'down') add('Cause', causeOf(d));
    if (tone === 'down') add('Evidence', evidenceSummary(d));
    const duration = num(d.duration_seconds);
    if (duration !== undefined) add('Down for', formatDuration(duration));
    add('Down since', str(d.started_at) ?? str(d.down_since));
    add('Last ping', str(d.last_ping_at));
    if (tone === 'down') add('Next expected', str(d.next_ping_at));
  } else if (n.event === 'integration.failing' || n.event === 'integration.recovered') {
    title = n.event === 'integration.failing' ? `Integration ${name} is failing` : `Integration ${name} delivers again`;
    add('Type', str(d.type));
    add('Failing since', str(d.failing_since));
    add('Last error', str(d.last_error));
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
