import type { ChartRange } from '../monitors/history.ts';

const HOUR = 3_600_000;
/** Checks spanning less than this fill too little of a day's chart to read. */
const SHORT = 6 * HOUR;

/**
 * The range a monitor's chart opens on when the address names none. A day, unless what there is
 * to see fits in the last hour: checks that started less than six hours ago and still run (a new
 * monitor, or one whose agents just came), or, with no check in the last day, a monitor younger
 * than six hours (its first check is on its way). A day's chart of those is a few points squeezed
 * at its right edge.
 */
export function defaultChartRange(m: { created_at: string }, span: { oldest: string; newest: string } | null, now: Date): ChartRange {
  const ago = (iso: string) => now.getTime() - Date.parse(iso);
  if (span === null) return ago(m.created_at) < SHORT ? '1h' : '24h';
  return ago(span.oldest) < SHORT && ago(span.newest) < HOUR ? '1h' : '24h';
}
