/** What one region saw, as an incident's `evidence` holds it (incidents/rules.ts RegionEvidence). */
interface Seen {
  region: string;
  ok?: unknown;
  status_code?: unknown;
  error?: unknown;
  total_ms?: unknown;
  abstained?: unknown;
}

const LISTED = 10;

function seen(e: Seen): string {
  const took = typeof e.total_ms === 'number' && Number.isFinite(e.total_ms) ? ` (${Math.round(e.total_ms)} ms)` : '';
  const what =
    typeof e.error === 'string' && e.error.trim() !== ''
      ? e.error.trim().slice(0, 160)
      : e.ok === true
        ? 'passed'
        : typeof e.status_code === 'number'
          ? `HTTP ${e.status_code}`
          : 'failed';
  return `${e.region}: ${what}${e.ok === true && what === 'passed' ? '' : took}${e.abstained === true ? ' (abstained)' : ''}`;
}

/**
 * What each region saw when the outage began, on one line ("eu-west: HTTP 503 (812 ms);
 * us-east: passed"); the first ten regions, then how many more. Undefined without evidence.
 */
export function evidenceSummary(data: Record<string, unknown>): string | undefined {
  const list = Array.isArray(data.evidence)
    ? (data.evidence as unknown[]).filter((e): e is Seen => !!e && typeof e === 'object' && typeof (e as Seen).region === 'string')
    : [];
  if (list.length === 0) return undefined;
  const shown = list.slice(0, LISTED).map(seen).join('; ');
  return list.length > LISTED ? `${shown}; and ${list.length - LISTED} more` : shown;
}
