/** "200-299, 301" for [200, ..., 299, 301]: the codes as ranges, the way people write them. */
export function codesText(codes: readonly number[]): string {
  const sorted = [...new Set(codes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/** The inverse of codesText; undefined when the text is not a list of codes and ranges. */
export function parseCodes(input: string): number[] | undefined {
  const codes: number[] = [];
  for (const part of input.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d{3})(?:-(\d{3}))?$/.exec(part);
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = Number(m[2] ?? m[1]);
    if (to < from) return undefined;
    for (let c = from; c <= to; c++) codes.push(c);
  }
  return codes;
}
