import type { IncidentImpact } from '../status-pages/overall.ts';
import { impactWords, statusWords, type IncidentStatus } from '../status-pages/incidents/rules.ts';
import { timeTag } from './components.ts';
import { html, type Html } from './html.ts';
import { markdown } from './markdown.ts';

/**
 * How an incident's parts read on the public page and in the dashboard: its status and impact in
 * words (with a colour, never a colour alone), its timeline newest first, Markdown made safe.
 */

const statusClass: Record<IncidentStatus, string> = {
  investigating: 'down',
  identified: 'late',
  monitoring: 'running',
  resolved: 'up',
};

const impactClass: Record<IncidentImpact, string> = { none: 'paused', minor: 'late', major: 'down', critical: 'down' };

export function statusPill(status: IncidentStatus): Html {
  return html`<span class="pill ${statusClass[status]}" data-incident-status="${status}">${statusWords[status]}</span>`;
}

export function impactPill(impact: IncidentImpact): Html {
  return html`<span class="pill ${impactClass[impact]}" data-impact="${impact}"
    >${impact === 'none' ? impactWords.none : `${impactWords[impact]} impact`}</span
  >`;
}

/** "2026-11-20 10:00 UTC", in a <time> with the exact instant. */
export const utcTime = (iso: string) => timeTag(iso, iso.slice(0, 16).replace('T', ' ') + ' UTC');

/** The updates, newest first: each its status in words, its time and its message. */
export function timeline(
  updates: readonly { status: IncidentStatus; message: string; at: string; by?: string | null }[],
  opts: { showBy?: boolean; headingsFrom?: number } = {},
): Html {
  return html`<ol class="timeline" data-testid="timeline">
    ${updates.map(
      (u) =>
        html`<li class="timeline-item" data-incident-status="${u.status}">
          <div class="timeline-head">
            <strong>${statusWords[u.status]}</strong>
            <span class="muted">${utcTime(u.at)}${opts.showBy ? html` · ${u.by ?? 'posted automatically'}` : ''}</span>
          </div>
          ${markdown(u.message, opts.headingsFrom)}
        </li>`,
    )}
  </ol>`;
}
