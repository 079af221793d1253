/**
 * How deeply arrays and objects may nest in JSON we accept (request bodies, stream messages).
 * No document of ours needs more than a handful of levels; the cap keeps every walk over
 * parsed input (ours, the JSON serializer's, the database driver's) far from the call stack's limit.
 */
export const MAX_JSON_DEPTH = 64;

export const tooDeepMessage = (what: string) =>
  `${what} is nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects are accepted.`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests deeper than `max`, read from the text before it is parsed, so a
 * hostile body is refused before a deep structure exists at all. Brackets inside strings do not
 * count; text that is not JSON at all is left for the parser to refuse.
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** Whether a parsed value nests deeper than `max`; iterative, so any depth is measured safely. */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
