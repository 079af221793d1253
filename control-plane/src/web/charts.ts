import type { Series, SparkPoint } from '../monitors/history.ts';
import { formatMs } from './components.ts';
import { escapeHtml, html, raw, type Html } from './html.ts';

/** Inline SVG charts: pure functions of their data, styled by the stylesheet's classes. */

const f = (n: number) => (Math.round(n * 10) / 10).toString();

/** Response times of the latest checks; slots with a failure are red dots on the baseline. */
export function sparkline(points: readonly SparkPoint[]): Html {
  if (points.length < 2) return html`<span class="faint">No data yet</span>`;
  const w = 120;
  const h = 30;
  const pad = 3;
  const max = Math.max(1, ...points.map((p) => p.ms ?? 0)) * 1.1;
  const x = (i: number) => pad + (i * (w - 2 * pad)) / (points.length - 1);
  const y = (ms: number) => h - pad - (ms / max) * (h - 2 * pad);
  const known = points.map((p, i) => [i, p.ms] as const).filter((e): e is readonly [number, number] => e[1] !== null);
  const line = known.map(([i, ms]) => `${f(x(i))},${f(y(ms))}`).join(' ');
  const area =
    known.length > 1
      ? `<path class="area" d="M${f(x(known[0]![0]))},${h - pad} L${line.replace(/ /g, ' L')} L${f(x(known.at(-1)![0]))},${h - pad} Z"/>`
      : '';
  const fails = points.map((p, i) => (p.ok ? '' : `<circle class="fail" cx="${f(x(i))}" cy="${h - pad}" r="2.2"/>`)).join('');
  const latest = [...points].reverse().find((p) => p.ms !== null)?.ms ?? null;
  return raw(
    `<svg class="spark" viewBox="0 0 ${w} ${h}" role="img" aria-label="Response times, latest ${escapeHtml(formatMs(latest))}">` +
      `${area}<polyline class="line" points="${line}"/>${fails}</svg>`,
  );
}

function niceMax(v: number): number {
  if (v <= 0) return 100;
  const magnitude = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= v) return step * magnitude;
  return 10 * magnitude;
}

function timeLabel(t: number, spanMs: number): string {
  const d = new Date(t);
  const hhmm = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  if (spanMs <= 36 * 3_600_000) return hhmm;
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

/** The drawing of a chart at one size: its text stays legible only near that width. */
interface ChartSize {
  cls: string;
  W: number;
  H: number;
  /** Labels along the time axis, less one. */
  ticks: number;
}
const chartSizes: readonly ChartSize[] = [
  { cls: 'chart chart-wide', W: 760, H: 220, ticks: 5 },
  // What a phone shows instead (the stylesheet swaps them): the same data drawn narrow.
  { cls: 'chart chart-narrow', W: 360, H: 200, ticks: 3 },
];

function drawChart(series: readonly Series[], from: number, to: number, size: ChartSize): { svg: string; failed: Map<number, number> } {
  const { W, H } = size;
  const m = { l: 52, r: 12, t: 10, b: 26 };
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.ms ?? 0))) * 1.05);
  const x = (t: number) => m.l + ((t - from) / Math.max(1, to - from)) * (W - m.l - m.r);
  const y = (ms: number) => H - m.b - (ms / max) * (H - m.t - m.b);
  let svg = `<svg class="${size.cls}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Response time by region">`;
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    svg += `<line class="grid" x1="${m.l}" x2="${W - m.r}" y1="${f(y(v))}" y2="${f(y(v))}"/>`;
    svg += `<text class="axis" x="${m.l - 8}" y="${f(y(v) + 4)}" text-anchor="end">${escapeHtml(formatMs(v))}</text>`;
  }
  for (let i = 0; i <= size.ticks; i++) {
    const t = from + ((to - from) * i) / size.ticks;
    const anchor = i === 0 ? 'start' : i === size.ticks ? 'end' : 'middle';
    svg += `<text class="axis" x="${f(x(t))}" y="${H - 8}" text-anchor="${anchor}">${escapeHtml(timeLabel(t, to - from))}</text>`;
  }
  series.forEach((s, i) => {
    // A bucket without a successful check breaks the line rather than bridging the gap.
    const runs: string[][] = [[]];
    for (const p of s.points) {
      if (p.ms === null) runs.push([]);
      else runs.at(-1)!.push(`${f(x(p.t))},${f(y(p.ms))}`);
    }
    for (const run of runs.filter((r) => r.length > 0)) {
      if (run.length === 1) {
        const [cx, cy] = run[0]!.split(',');
        svg += `<circle class="dot s${i % 6}" cx="${cx}" cy="${cy}" r="2.5"><title>${escapeHtml(s.name)}</title></circle>`;
      } else {
        svg += `<polyline class="line s${i % 6}" points="${run.join(' ')}"><title>${escapeHtml(s.name)}</title></polyline>`;
      }
    }
  });
  const failed = new Map<number, number>();
  for (const s of series) for (const p of s.points) if (p.failures > 0) failed.set(p.t, (failed.get(p.t) ?? 0) + p.failures);
  for (const [t, n] of failed) {
    svg += `<line class="fail-tick" x1="${f(x(t))}" x2="${f(x(t))}" y1="${H - m.b - 6}" y2="${H - m.b}"><title>${n} failed check${n === 1 ? '' : 's'}</title></line>`;
  }
  svg += '</svg>';
  return { svg, failed };
}

/** Response time over a time range, one line per region, with axes in ms and UTC time. */
export function responseChart(series: readonly Series[], from: number, to: number): Html {
  const hasData = series.some((s) => s.points.length > 0);
  if (!hasData) return html`<div class="empty"><p>No checks in this range yet.</p></div>`;
  const drawn = chartSizes.map((size) => drawChart(series, from, to, size));
  const failed = drawn[0]!.failed;
  const legend = html`<div class="legend">
    ${series.map((s, i) => html`<span><i class="k${i % 6}"></i>${s.name}</span>`)}${
      failed.size > 0 ? html`<span><i class="fail-key"></i>failed checks</span>` : ''
    }<span class="faint">Times in UTC</span>
  </div>`;
  return html`${raw(drawn.map((d) => d.svg).join(''))}${legend}`;
}

export interface Timings {
  dns: number;
  connect: number;
  tls: number;
  ttfb: number;
  total: number;
}

/**
 * The phases of one check as a stacked bar on a shared scale: DNS, connect, TLS, waiting for
 * the first byte (ttfb counts from the start, so the setup phases are taken out) and download.
 */
export function phaseBar(t: Timings, scaleMs: number): Html {
  const setup = t.dns + t.connect + t.tls;
  const parts: [string, string, number][] = [
    ['ph-dns', 'DNS', t.dns],
    ['ph-connect', 'Connect', t.connect],
    ['ph-tls', 'TLS', t.tls],
    ['ph-ttfb', 'Waiting', Math.max(0, t.ttfb - setup)],
    ['ph-rest', 'Download', Math.max(0, t.total - Math.max(t.ttfb, setup))],
  ];
  const W = 140;
  const scale = W / Math.max(1, scaleMs);
  let x = 0;
  let rects = '';
  for (const [cls, name, ms] of parts) {
    if (ms <= 0) continue;
    const w = Math.max(0.8, ms * scale);
    rects += `<rect class="${cls}" x="${f(x)}" y="1" width="${f(w)}" height="10" rx="1"><title>${name}: ${escapeHtml(formatMs(ms))}</title></rect>`;
    x += w;
  }
  const label = parts.map(([, name, ms]) => `${name} ${formatMs(ms)}`).join(', ');
  return raw(
    `<svg class="phases" viewBox="0 0 ${W} 12" preserveAspectRatio="xMinYMid meet" role="img" aria-label="${escapeHtml(label)}">${rects}</svg>`,
  );
}

export const phaseLegend = html`<div class="legend phase-legend hide-sm">
  <span><i class="ph-dns"></i>DNS</span><span><i class="ph-connect"></i>Connect</span><span><i class="ph-tls"></i>TLS</span
  ><span><i class="ph-ttfb"></i>Waiting</span><span><i class="ph-rest"></i>Download</span>
</div>`;
