import type { Readable } from 'node:stream';
import { z } from 'zod';
import { PING_BODY_LIMIT, type PingKind } from '../contracts/pings.ts';

export interface PingTarget {
  heartbeatId: string;
  kind: PingKind;
  exitCode: number | null;
}

const uuid = z.uuid();

/**
 * What `/heartbeat/<id>[/<suffix>]` asks for, or null when the path names no ping URL.
 * Suffixes: none (success), `start`, `fail`, or an exit code 0..255 (0 success, else fail),
 * so `cmd; curl .../heartbeat/<id>/$?` works unchanged.
 */
export function parsePingTarget(id: string, suffix?: string): PingTarget | null {
  if (!uuid.safeParse(id).success) return null;
  const heartbeatId = id.toLowerCase();
  if (suffix === undefined) return { heartbeatId, kind: 'success', exitCode: null };
  if (suffix === 'start' || suffix === 'fail') return { heartbeatId, kind: suffix, exitCode: null };
  if (!/^\d{1,3}$/.test(suffix)) return null;
  const code = Number(suffix);
  if (code > 255) return null;
  return { heartbeatId, kind: code === 0 ? 'success' : 'fail', exitCode: code };
}

/** Where the last complete UTF-8 sequence of `buf` ends, so a cut never splits a character. */
export function utf8Boundary(buf: Uint8Array): number {
  let i = buf.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (buf[i]! & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i < 0) return buf.length;
  const lead = buf[i]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return i + length <= buf.length ? buf.length : i;
}

/**
 * The kept part of a body as text: cut at a character boundary when the body was longer than
 * what was kept; bytes that are not UTF-8, and NUL (which Postgres text cannot hold), become U+FFFD.
 */
export function bodyExcerpt(head: Uint8Array, truncated: boolean): string {
  const end = truncated ? utf8Boundary(head) : head.length;
  return (
    Buffer.from(head.buffer, head.byteOffset, end)
      .toString('utf8')
      // eslint-disable-next-line no-control-regex -- NUL is the character looked for
      .replace(/\u0000/g, '\uFFFD')
  );
}

export interface ReadBody {
  head: Buffer;
  size: number;
}

/**
 * Reads a request body to its end, keeping the first `limit` bytes: a job that posts a large log
 * still gets its ping recorded, and the edge holds at most `limit` bytes per request.
 */
export function readBodyHead(stream: Readable, limit = PING_BODY_LIMIT): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (kept >= limit) return;
      const part = chunk.subarray(0, limit - kept);
      chunks.push(part);
      kept += part.length;
    });
    stream.on('end', () => resolve({ head: Buffer.concat(chunks, kept), size }));
    stream.on('error', reject);
  });
}
