import { componentCondition, type ComponentState } from './overall.ts';

/**
 * What a badge says, as pure functions (docs/status-pages.md, "Badges"): the address read into a
 * request, and a subject's state or figures into a label, a message and a colour. The SVG and the
 * Shields endpoint JSON are both drawn from the same `Badge`.
 */

export const badgeKinds = ['status', 'uptime', 'response'] as const;
export type BadgeKind = (typeof badgeKinds)[number];

export const badgeFormats = ['svg', 'json'] as const;
export type BadgeFormat = (typeof badgeFormats)[number];

/** The windows an uptime or response time badge covers, in seconds. */
export const badgeWindows = { '24h': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400, '90d': 90 * 86_400 } as const;
export type BadgeWindow = keyof typeof badgeWindows;

export const responseStats = ['avg', 'p95'] as const;
export type ResponseStat = (typeof responseStats)[number];

/** The window when none is asked for: a monitor's own `uptime` is over 30 days; response time is recent. */
export const defaultWindows: Record<Exclude<BadgeKind, 'status'>, BadgeWindow> = { uptime: '30d', response: '24h' };

/** A label is cut to this many characters (with an ellipsis). */
export const MAX_LABEL = 60;

export interface BadgeRequest {
  kind: BadgeKind;
  format: BadgeFormat;
  window: BadgeWindow;
  stat: ResponseStat;
  /** The left text asked for instead of the default one; "" draws the message alone. */
  label: string | undefined;
}

export type ParsedBadge = { ok: true; request: BadgeRequest } | { ok: false; status: 400 | 404; message: string };

const listed = <T extends string>(values: readonly T[]) => values.join(', ');

/**
 * A badge's file name (`uptime.svg`) and query (`window`, `stat`, `label`; any other field is
 * ignored, so a cache-busting `?v=2` works). An unknown kind or format is a badge that does not
 * exist (404); a bad value of a known field is 400. Each message is short plain text naming the field.
 */
export function parseBadge(file: string, query: Readonly<Record<string, unknown>>): ParsedBadge {
  const m = /^([a-z]+)\.([a-z]+)$/.exec(file);
  const kind = badgeKinds.find((k) => k === m?.[1]);
  const format = badgeFormats.find((f) => f === m?.[2]);
  if (!kind || !format) {
    return { ok: false, status: 404, message: `No such badge: use status, uptime or response, as .svg or .json.` };
  }
  const text = (name: string): string | undefined | null => {
    const v = query[name];
    return v === undefined ? undefined : typeof v === 'string' ? v : null;
  };
  const window = text('window');
  const stat = text('stat');
  const label = text('label');
  if (kind !== 'status' && window !== undefined && !(window !== null && Object.hasOwn(badgeWindows, window))) {
    return { ok: false, status: 400, message: `window: use one of ${listed(Object.keys(badgeWindows))}.` };
  }
  if (kind === 'response' && stat !== undefined && !responseStats.some((s) => s === stat)) {
    return { ok: false, status: 400, message: `stat: use one of ${listed(responseStats)}.` };
  }
  if (label === null) return { ok: false, status: 400, message: 'label: give it once.' };
  return {
    ok: true,
    request: {
      kind,
      format,
      window: kind === 'status' ? '24h' : ((window as BadgeWindow | undefined) ?? defaultWindows[kind]),
      stat: (stat as ResponseStat | undefined) ?? 'avg',
      label,
    },
  };
}

/** The words of a status page, and two more for what is not known yet. */
export type BadgeStatus = 'operational' | 'degraded' | 'down' | 'maintenance' | 'paused' | 'pending';

/**
 * A component's word, by the rule of the status page's banner (overall.ts): maintenance first,
 * then down, degraded, operational; what the banner leaves uncounted is `paused` when it is
 * paused, else `pending` (a monitor never checked, a heartbeat never pinged).
 */
export function badgeStatus(c: ComponentState): BadgeStatus {
  const condition = componentCondition(c);
  if (condition !== 'uncounted') return condition;
  const paused = c.type === 'monitor' ? c.status === 3 : c.status === 'paused';
  return paused ? 'paused' : 'pending';
}

/**
 * The colours, each dark enough for white text at 4.5:1 (WCAG AA; test/status-pages/badge-values.test.ts
 * checks them): the usual badge colours, a shade darker.
 */
export const badgeColors = {
  label: '#555555',
  green: '#2e7d32',
  olive: '#5f7300',
  amber: '#8a6100',
  orange: '#b34700',
  red: '#c62828',
  blue: '#1f5fbf',
  grey: '#5f6b76',
  info: '#0b63b6',
} as const;

const statusColors: Record<BadgeStatus, string> = {
  operational: badgeColors.green,
  degraded: badgeColors.amber,
  down: badgeColors.red,
  maintenance: badgeColors.blue,
  paused: badgeColors.grey,
  pending: badgeColors.grey,
};

export interface Badge {
  /** The left text; "" draws the message alone. */
  label: string;
  message: string;
  /** The message's background, #rrggbb. */
  color: string;
}

/** The message of a badge whose figure is not known (no checks in the window). */
export const NO_DATA = 'no data';

export function statusBadge(label: string, status: BadgeStatus): Badge {
  return { label, message: status, color: statusColors[status] };
}

/** The colour of an uptime, from green at 99.9 % and up to red below 90 %. */
export function uptimeColor(percent: number): string {
  if (percent >= 99.9) return badgeColors.green;
  if (percent >= 99) return badgeColors.olive;
  if (percent >= 95) return badgeColors.amber;
  if (percent >= 90) return badgeColors.orange;
  return badgeColors.red;
}

/** "100%", "99.95%", "97.3%": two decimals from 99 % up (where they matter), as the dashboard writes an uptime. */
export function formatPercent(percent: number): string {
  return percent >= 99.995 ? '100%' : `${percent.toFixed(percent >= 99 ? 2 : 1)}%`;
}

export function uptimeBadge(label: string, percent: number | null): Badge {
  if (percent === null) return { label, message: NO_DATA, color: badgeColors.grey };
  return { label, message: formatPercent(percent), color: uptimeColor(percent) };
}

/** "87 ms", "1.24 s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/**
 * Response time in one neutral colour: what is slow depends on the service (a report that takes
 * two seconds may be fine), and the monitor's own degraded rule says so on the status badge.
 */
export function responseBadge(label: string, ms: number | null): Badge {
  if (ms === null) return { label, message: NO_DATA, color: badgeColors.grey };
  return { label, message: formatMs(ms), color: badgeColors.info };
}

/** The left text of a badge: the one asked for, else the default, cut to MAX_LABEL characters. */
export function badgeLabel(request: Pick<BadgeRequest, 'kind' | 'window' | 'stat' | 'label'>, name: string): string {
  const label =
    request.label ??
    (request.kind === 'status'
      ? name
      : request.kind === 'uptime'
        ? `uptime ${request.window}`
        : `${request.stat === 'p95' ? 'p95' : 'avg'} response ${request.window}`);
  return label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label;
}

/** Shields' minimum: its endpoint badge caches at least this long whatever is asked. */
export const SHIELDS_CACHE_SECONDS = 300;

/** The Shields endpoint JSON of a badge (https://shields.io/badges/endpoint-badge). */
export function endpointJson(b: Badge): {
  schemaVersion: 1;
  label: string;
  message: string;
  color: string;
  labelColor: string;
  cacheSeconds: number;
} {
  return {
    schemaVersion: 1,
    label: b.label,
    message: b.message,
    color: b.color,
    labelColor: badgeColors.label,
    cacheSeconds: SHIELDS_CACHE_SECONDS,
  };
}
