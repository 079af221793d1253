import { badgeColors, type Badge } from '../status-pages/badge-values.ts';
import { escapeHtml } from './html.ts';

// Verdana 11px, which badges are drawn in, averages about 6.5 px a character; wide letters more.
function textWidth(text: string): number {
  let w = 0;
  for (const ch of text) w += /[mwMW@%]/.test(ch) ? 9.5 : /[A-Z0-9]/.test(ch) ? 7.4 : /[iljtf.,:;'!| ]/.test(ch) ? 3.6 : 6.3;
  return Math.ceil(w);
}

/** One side of the badge: a shadow one pixel down (hidden from screen readers), then the text, stretched to the width measured. */
function text(value: string, x: number, width: number): string {
  const v = escapeHtml(value);
  return (
    `<text aria-hidden="true" x="${x}" y="15" fill="#010101" fill-opacity=".3" textLength="${width}">${v}</text>` +
    `<text x="${x}" y="14" textLength="${width}">${v}</text>`
  );
}

/**
 * A badge in the flat style of shields.io: the label on grey, the message on its colour, white
 * text (every colour of badge-values.ts holds 4.5:1 against it). Named for screen readers by its
 * `<title>` and `aria-label` ("label: message"); an empty label draws the message alone.
 */
export function renderBadge(b: Badge): string {
  const lt = b.label === '' ? 0 : textWidth(b.label);
  const mt = textWidth(b.message);
  const lw = b.label === '' ? 0 : lt + 12;
  const mw = mt + 12;
  const w = lw + mw;
  const name = escapeHtml(b.label === '' ? b.message : `${b.label}: ${b.message}`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${name}"><title>${name}</title>` +
    `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
    `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)">${lw > 0 ? `<rect width="${lw}" height="20" fill="${badgeColors.label}"/>` : ''}<rect x="${lw}" width="${mw}" height="20" fill="${b.color}"/>` +
    `<rect width="${w}" height="20" fill="url(#s)"/></g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="11">` +
    (lw > 0 ? text(b.label, lw / 2, lt) : '') +
    text(b.message, lw + mw / 2, mt) +
    `</g></svg>`
  );
}

const legacyColors: Record<string, string> = {
  up: badgeColors.green,
  down: badgeColors.red,
  late: badgeColors.amber,
  running: badgeColors.blue,
  paused: badgeColors.grey,
};

/**
 * The first badge (`/badge/<slug>.svg`): the subject's name, its own status word and, for a
 * monitor, its 30-day uptime. Addresses in READMEs keep showing what they showed.
 */
export function badgeSvg(label: string, status: string, detail?: string): string {
  return renderBadge({
    label: label.length > 40 ? `${label.slice(0, 39)}…` : label,
    message: detail ? `${status} · ${detail}` : status,
    color: legacyColors[status] ?? badgeColors.grey,
  });
}
