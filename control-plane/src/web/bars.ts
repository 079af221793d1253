import type { CauseKind, DayUptime, PublicIncident, SparkPoint } from '../monitors/history.ts';
import { formatDuration, formatMs } from './components.ts';
import { escapeHtml, raw, type Html } from './html.ts';

/**
 * Bar strips: a monitor's latest checks (the monitors list) and its days (the status page). Each
 * bar carries its details in an SVG <title>, the browser's own tooltip; the dashboard's script
 * shows the same text in a box on hover or tap (`data-tips`), which phones show too.
 */

/** "2026-11-26 14:05 UTC" */
export function utcMinute(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const rect = (cls: string, x: number, width: number, height: number, title: string) =>
  `<rect${cls ? ` class="${cls}"` : ''} x="${x}" y="0" width="${width}" height="${height}" rx="1"><title>${escapeHtml(title)}</title></rect>`;

/** A check slot: up when every region's check passed, down when none did, partial in between. */
export function slotState(p: SparkPoint): 'up' | 'down' | 'partial' {
  if (p.failed === 0) return 'up';
  return p.failed >= p.checks ? 'down' : 'partial';
}

export function slotText(p: SparkPoint): string {
  const when = utcMinute(p.at);
  const ms = p.ms === null ? '' : ` · ${formatMs(p.ms)}`;
  const state = slotState(p);
  if (state === 'up') return `${when}${ms} · up`;
  const regions = p.checks === 1 ? 'the check failed' : `${p.failed} of ${p.checks} regions failed`;
  return `${when}${ms} · ${state === 'down' ? 'down' : 'partly down'}: ${regions}`;
}

/**
 * The latest `count` check slots of a monitor, oldest on the left: green up, red down, amber when
 * some regions failed, grey where there was no check yet.
 */
export function checkBars(points: readonly SparkPoint[], count = 40): Html {
  const latest = points.slice(-count);
  const empty = count - latest.length;
  const step = 6;
  const rects: string[] = [];
  for (let i = 0; i < empty; i++) rects.push(rect('', i * step, step - 2, 20, 'No check yet'));
  latest.forEach((p, i) => rects.push(rect(slotState(p), (empty + i) * step, step - 2, 20, slotText(p))));
  const up = latest.filter((p) => slotState(p) === 'up').length;
  const label = latest.length === 0 ? 'No checks yet' : `Latest ${latest.length} checks: ${up} up, ${latest.length - up} with failures`;
  return raw(
    `<svg class="beats" viewBox="0 0 ${count * step - 2} 20" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(label)}" data-tips>${rects.join('')}</svg>`,
  );
}

/**
 * A day's colour by its uptime: 100 % green, at least 99 % light green, 95 % yellow, 90 % orange,
 * below that red; grey without data. So a day at 99.9 % does not look like an outage.
 */
export function dayGrade(uptime: number | null): string {
  if (uptime === null) return '';
  if (uptime >= 99.995) return 'b-ok';
  if (uptime >= 99) return 'b-minor';
  if (uptime >= 95) return 'b-warn';
  if (uptime >= 90) return 'b-poor';
  return 'b-bad';
}

/** What a status page calls a kind of cause: no host, no error text. */
export const causeLabels: Record<CauseKind, string> = {
  timeout: 'not responding',
  status: 'error responses',
  refused: 'connection refused',
  dns: 'name not resolving',
  tls: 'secure connection failing',
  other: 'unavailable',
};

/** Incidents listed in a day's tooltip before "and N more". */
const SHOWN_PER_DAY = 5;

/** The figure of a day and the incidents that overlap it, one line each. */
export function dayText(d: DayUptime, incidents: readonly PublicIncident[]): string {
  if (d.uptime === null) return `${d.day}: no data`;
  const lines = [`${d.day}: ${d.uptime >= 99.995 ? '100' : d.uptime.toFixed(2)}% uptime`];
  for (const i of incidents.slice(0, SHOWN_PER_DAY)) {
    const start = i.started_at.slice(0, 10) === d.day ? `${i.started_at.slice(11, 16)} UTC` : utcMinute(i.started_at);
    const length = i.ended_at ? `for ${formatDuration(i.duration)}` : `ongoing, ${formatDuration(i.duration)} so far`;
    lines.push(`Down from ${start} ${length}: ${causeLabels[i.kind]}`);
  }
  if (incidents.length > SHOWN_PER_DAY) lines.push(`and ${incidents.length - SHOWN_PER_DAY} more`);
  return lines.join('\n');
}

/** The incidents of a monitor that overlap each of these UTC days. */
export function incidentsByDay(days: readonly DayUptime[], incidents: readonly PublicIncident[], now: Date): PublicIncident[][] {
  return days.map((d) => {
    const from = Date.parse(`${d.day}T00:00:00Z`);
    const to = from + 86_400_000;
    return incidents.filter((i) => Date.parse(i.started_at) < to && (i.ended_at ? Date.parse(i.ended_at) : now.getTime()) > from);
  });
}

const BAR_HEIGHT = 34;

/**
 * A day's bar. A red day is red only for its share of downtime, from the bottom, over a pale red:
 * a day at 57 % is not drawn like a day down from start to end.
 */
function dayBar(d: DayUptime, x: number, width: number, text: string): string {
  const grade = dayGrade(d.uptime);
  if (grade !== 'b-bad') return rect(grade, x, width, BAR_HEIGHT, text);
  const down = Math.max(2, Math.round(BAR_HEIGHT * (1 - d.uptime! / 100) * 10) / 10);
  return (
    `<g class="${grade}"><title>${escapeHtml(text)}</title>` +
    `<rect class="day-rest" x="${x}" y="0" width="${width}" height="${BAR_HEIGHT}" rx="1"/>` +
    `<rect class="day-down" x="${x}" y="${Math.round((BAR_HEIGHT - down) * 10) / 10}" width="${width}" height="${down}" rx="1"/></g>`
  );
}

/** One bar per day (oldest first), coloured by that day's uptime; its figure and incidents on hover. */
export function uptimeBars(days: readonly DayUptime[], incidents: readonly PublicIncident[], now: Date): Html {
  const step = 5;
  const byDay = incidentsByDay(days, incidents, now);
  const rects = days.map((d, i) => dayBar(d, i * step, step - 1.2, dayText(d, byDay[i]!))).join('');
  return raw(
    `<svg class="bars" viewBox="0 0 ${days.length * step} ${BAR_HEIGHT}" preserveAspectRatio="none" role="img" aria-label="Uptime per day" data-tips>${rects}</svg>`,
  );
}
