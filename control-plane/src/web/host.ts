/** The host name of a Host header, lower case, without its port; undefined when there is none. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.replace(/:\d*$/, '').replace(/\.$/, '');
}
