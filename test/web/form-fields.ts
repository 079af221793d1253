/**
 * What a browser without JavaScript would submit from a page's form as served: every input,
 * select and textarea with its value (checked boxes only; a select's selected option, or its
 * first). Tests change a few fields and post the rest as they are, like a person filling it in.
 */

const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`' };
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (e) => entities[e]!);

function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([\w.:-]+)(?:="([^"]*)")?/g)) out.set(m[1]!, unescape(m[2] ?? ''));
  return out;
}

/** The fields of the first form on the page with `marker` in its start tag (`data-check-form`). */
export function formFields(page: string, marker: string): Record<string, string> {
  const start = page.search(new RegExp(`<form\\b[^>]*${marker}`));
  if (start < 0) throw new Error(`no form with ${marker} on the page`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input\b([^>]*)>/g)) {
    const a = attributes(m[1]!);
    const name = a.get('name');
    if (!name) continue;
    if ((a.get('type') === 'checkbox' || a.get('type') === 'radio') && !a.has('checked')) continue;
    fields[name] = a.get('value') ?? '';
  }
  for (const m of form.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const name = attributes(m[1]!).get('name');
    if (!name) continue;
    const options = [...m[2]!.matchAll(/<option\b([^>]*)>/g)].map((o) => attributes(o[1]!));
    const chosen = options.find((o) => o.has('selected')) ?? options[0];
    fields[name] = chosen?.get('value') ?? '';
  }
  for (const m of form.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const name = attributes(m[1]!).get('name');
    // The line break right after the start tag is markup, not the value.
    if (name) fields[name] = unescape(m[2]!.replace(/^\r?\n/, ''));
  }
  return fields;
}
