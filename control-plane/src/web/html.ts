/**
 * HTML built with a tagged template: every interpolated value is escaped unless it is already
 * `Html` (the result of another `html` template, or `raw`). Arrays are joined; null, undefined
 * and false render nothing, so `${cond && html`...`}` reads naturally.
 */
const SAFE: unique symbol = Symbol('html');

export interface Html {
  readonly [SAFE]: true;
  readonly value: string;
}

const safe = (value: string): Html => ({ [SAFE]: true, value });
const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && SAFE in v;

export type Child = Html | string | number | boolean | null | undefined | readonly Child[];

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => entities[c]!);
}

function render(child: Child): string {
  if (child === null || child === undefined || child === false || child === true) return '';
  if (isHtml(child)) return child.value;
  if (Array.isArray(child)) return child.map(render).join('');
  return escapeHtml(String(child));
}

export function html(strings: TemplateStringsArray, ...values: Child[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return safe(out);
}

/** Markup we produced ourselves (SVG paths, pre-escaped text). Never pass user input. */
export function raw(markup: string): Html {
  return safe(markup);
}

export function join(items: readonly Child[], separator: Child = ''): Html {
  return safe(items.map(render).join(render(separator)));
}
