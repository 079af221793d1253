/**
 * Text for XML 1.0 (the status pages' feeds): `&`, `<`, `>`, `"` and `'` as entities, and the
 * characters XML cannot hold at all, even as references (C0 controls other than tab, line feed
 * and carriage return, lone surrogates, U+FFFE and U+FFFF), dropped. Whatever a title or a
 * message holds, the document stays well formed; `]]>` is harmless since no CDATA is written.
 */
const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

const notXml = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlText(text: string): string {
  return text.replace(notXml, '').replace(/[&<>"']/g, (c) => entities[c]!);
}

/** An element with escaped text, or nothing for an empty value. */
export const xmlElement = (name: string, text: string | null | undefined, attrs = ''): string =>
  text ? `<${name}${attrs}>${xmlText(text)}</${name}>` : '';
