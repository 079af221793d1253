import { requireProject, type Principal } from '../accounts/bearer.ts';
import { maintenanceSpans } from '../maintenance/service.ts';
import { uptimePercent } from '../monitors/uptime.ts';
import { notFound } from '../platform/errors.ts';
import type { ApiContext } from '../platform/http/context.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import * as repo from './repo.ts';
import { stateOf } from './record.ts';
import { nextState } from './state.ts';
import { downUpChanges } from './timeline-repo.ts';

/** [start, end) in ms. */
export type Span = readonly [number, number];

/** The spans merged where they overlap or touch, oldest first, empty ones left out. */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = spans.filter(([lo, hi]) => hi > lo).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out.at(-1);
    if (last && lo <= last[1]) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** The parts of `spans` outside every span of `holes`. */
export function subtractSpans(spans: readonly Span[], holes: readonly Span[]): Span[] {
  const cut = mergeSpans(holes);
  const out: Span[] = [];
  for (const [lo, hi] of mergeSpans(spans)) {
    let at = lo;
    for (const [hlo, hhi] of cut) {
      if (hhi <= at || hlo >= hi) continue;
      if (hlo > at) out.push([at, hlo]);
      at = Math.max(at, hhi);
    }
    if (at < hi) out.push([at, hi]);
  }
  return out;
}

const length = (spans: readonly Span[]) => spans.reduce((s, [lo, hi]) => s + (hi - lo), 0);

export interface UptimeInput {
  /** The window, ms. */
  from: number;
  to: number;
  /** When the heartbeat was created: it is not watched before. */
  createdAt: number;
  /** Its down and up transitions, in any order: each down period opens with one down and closes with one up (state.ts). */
  changes: readonly { kind: 'down' | 'up'; at: number }[];
  /** When its down period still open began (the state now); null when it is not down. */
  downSince: number | null;
  /** When maintenance covered it. */
  maintenance: readonly Span[];
}

/**
 * Uptime of a heartbeat over a window, percent, as a monitor's is counted: the share of the time
 * watched (since creation, outside maintenance) not inside a down period. A down period runs from
 * its heartbeat.down to its heartbeat.up (a pause inside it stays inside it, as the rules say);
 * an up whose down came before the changes given began before the window.
 */
export function heartbeatUptime(input: UptimeInput): number {
  const lo = Math.max(input.from, input.createdAt);
  const hi = input.to;
  if (hi <= lo) return 100;
  const down: Span[] = [];
  let open: number | null = null;
  for (const c of [...input.changes].sort((a, b) => a.at - b.at)) {
    if (c.kind === 'down') open ??= c.at;
    else {
      down.push([open ?? -Infinity, c.at]);
      open = null;
    }
  }
  if (open !== null) down.push([open, hi]);
  if (input.downSince !== null) down.push([input.downSince, hi]);
  const clip = (spans: readonly Span[]) => spans.map(([a, b]): Span => [Math.max(a, lo), Math.min(b, hi)]);
  const maintenance = clip(input.maintenance);
  const watched = length(subtractSpans([[lo, hi]], maintenance));
  const downTime = length(subtractSpans(clip(down), maintenance));
  return uptimePercent(downTime / 1000, watched / 1000);
}

/** Transitions read for one window at most: a heartbeat that flaps all day for 90 days has fewer. */
const MAX_CHANGES = 50_000;

/** Uptime of a heartbeat over the trailing `seconds`, percent (a badge's). */
export async function heartbeatUptimeOver(ctx: ApiContext, p: Principal, projectId: string, id: string, seconds: number): Promise<number> {
  requireProject(p, projectId);
  const [record] = await repo.heartbeatRecords(ctx.sql, projectId, [id]);
  if (!record) throw notFound();
  const now = ctx.now();
  const from = new Date(now.getTime() - seconds * 1000);
  const [changes, maintenance] = await Promise.all([
    downUpChanges(ctx.sql, id, from, MAX_CHANGES),
    maintenanceSpans(ctx, p, projectId, { type: 'heartbeat', id }, from, now),
  ]);
  // A paused heartbeat keeps its down period open (state.ts); an active one is advanced to now first.
  const state = record.active ? nextState(stateOf(record), { type: 'tick' }, now).state : stateOf(record);
  return heartbeatUptime({
    from: from.getTime(),
    to: now.getTime(),
    createdAt: Date.parse(formatTimestamp(record.created_at)),
    changes: changes.map((c) => ({ kind: c.kind, at: c.at.getTime() })),
    downSince: state.down_since?.getTime() ?? null,
    maintenance,
  });
}
