import { escapeHtml } from './html.ts';

const colors: Record<string, string> = {
  up: '#1b9e55',
  down: '#d33a32',
  late: '#c9790d',
  running: '#2f6fd0',
  paused: '#6b7685',
  pending: '#8a95a3',
  new: '#8a95a3',
};

// Verdana 11px, which badges are drawn in, averages about 6.5 px a character; wide letters more.
function textWidth(text: string): number {
  let w = 0;
  for (const ch of text) w += /[mwMW@%]/.test(ch) ? 9.5 : /[A-Z0-9]/.test(ch) ? 7.4 : /[iljtf.,:;'!| ]/.test(ch) ? 3.6 : 6.3;
  return Math.ceil(w);
}

/** A status badge in the familiar two-part style: label on grey, status on its colour. */
export function badgeSvg(label: string, status: string, detail?: string): string {
  const left = label.length > 40 ? `${label.slice(0, 39)}…` : label;
  const right = detail ? `${status} · ${detail}` : status;
  const lw = textWidth(left) + 12;
  const rw = textWidth(right) + 12;
  const w = lw + rw;
  const color = colors[status] ?? colors.pending!;
  const l = escapeHtml(left);
  const r = escapeHtml(right);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${r}"><title>${l}: ${r}</title>` +
    `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
    `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${rw}" height="20" fill="${color}"/><rect width="${w}" height="20" fill="url(#s)"/></g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">` +
    `<text x="${lw / 2}" y="15" fill="#010101" fill-opacity=".3">${l}</text><text x="${lw / 2}" y="14">${l}</text>` +
    `<text x="${lw + rw / 2}" y="15" fill="#010101" fill-opacity=".3">${r}</text><text x="${lw + rw / 2}" y="14">${r}</text></g></svg>`
  );
}
