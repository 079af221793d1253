import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A token of ours, whole: prefix and 32 random bytes in base64url. The dashboard's short display prefix does not match. */
const tokenPattern = /upt[mt]?_[A-Za-z0-9_-]{43}/g;

// Rabin-Karp over the first WINDOW bytes of every secret: one pass over a log, whatever the number
// of secrets. 32-bit arithmetic, and a bitmap in front of the map so most bytes cost a few operations.
const WINDOW = 8;
const BASE = 0x01000193;
const FILTER_BITS = 22;

function windowHash(buf: Buffer, at: number): number {
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, BASE) + buf[at + i]!) | 0;
  return h;
}

/** Which of `secrets` (each at least WINDOW bytes) occur in `text`, and where first. */
export function findSecrets(text: Buffer, secrets: readonly Buffer[]): Map<number, number> {
  const found = new Map<number, number>();
  const byHash = new Map<number, number[]>();
  const filter = new Uint8Array(1 << (FILTER_BITS - 3));
  secrets.forEach((s, i) => {
    if (s.length < WINDOW) return;
    const h = windowHash(s, 0);
    byHash.set(h, [...(byHash.get(h) ?? []), i]);
    const bit = h >>> (32 - FILTER_BITS);
    filter[bit >>> 3]! |= 1 << (bit & 7);
  });
  if (byHash.size === 0 || text.length < WINDOW) return found;
  let top = 1; // BASE^WINDOW, what the byte leaving the window weighs
  for (let i = 0; i < WINDOW; i++) top = Math.imul(top, BASE);
  let h = windowHash(text, 0);
  const last = text.length - WINDOW;
  for (let at = 0; ; at++) {
    const bit = h >>> (32 - FILTER_BITS);
    if (filter[bit >>> 3]! & (1 << (bit & 7))) {
      for (const i of byHash.get(h) ?? []) {
        const s = secrets[i]!;
        if (!found.has(i) && at + s.length <= text.length && text.compare(s, 0, s.length, at, at + s.length) === 0) found.set(i, at);
      }
    }
    if (at === last) return found;
    h = (Math.imul(h, BASE) + text[at + WINDOW]! - Math.imul(text[at]!, top)) | 0;
  }
}

export interface Leak {
  file: string;
  line: number;
  /** The line, with the secret cut down to its first characters. */
  excerpt: string;
}

function leakAt(file: string, text: Buffer, at: number, length: number): Leak {
  const start = text.lastIndexOf(10, at) + 1;
  const endNl = text.indexOf(10, at);
  const end = endNl === -1 ? text.length : endNl;
  let line = 1;
  for (let i = text.indexOf(10); i !== -1 && i < at; i = text.indexOf(10, i + 1)) line++;
  const before = text.subarray(start, at).toString('utf8');
  const secret = text.subarray(at, at + length).toString('utf8');
  const after = text.subarray(at + length, end).toString('utf8');
  return { file, line, excerpt: `${before.slice(-200)}${secret.slice(0, 4)}…[secret]${after.slice(0, 200)}` };
}

/**
 * Searches every log file of a test run (`log-*`, `child-*`) for the secrets the tests registered
 * (`secrets-*`) and for anything shaped like one of our tokens.
 */
export function scanLogDir(dir: string): { files: number; bytes: number; secrets: number; leaks: Leak[] } {
  const names = readdirSync(dir);
  const secrets = [
    ...new Set(
      names.filter((n) => n.startsWith('secrets-')).flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean)),
    ),
  ].map((s) => Buffer.from(s, 'utf8'));
  const logs = names.filter((n) => n.startsWith('log-') || n.startsWith('child-'));
  const leaks: Leak[] = [];
  let bytes = 0;
  for (const name of logs) {
    const text = readFileSync(join(dir, name));
    bytes += text.length;
    const at = new Set<number>();
    for (const [i, offset] of findSecrets(text, secrets)) {
      at.add(offset);
      leaks.push(leakAt(name, text, offset, secrets[i]!.length));
    }
    for (const m of text.toString('latin1').matchAll(tokenPattern)) {
      if (!at.has(m.index)) leaks.push(leakAt(name, text, m.index, m[0].length));
    }
  }
  return { files: logs.length, bytes, secrets: secrets.length, leaks };
}
