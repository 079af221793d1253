/**
 * Readable log lines for a terminal. pino writes one JSON object a line; in a terminal each is
 * turned into `12:04:05 INFO  [component] message  key=value ...`. A request becomes one line
 * (`GET /monitors 200 12 ms`) when it completes. Anything not a terminal keeps the JSON lines.
 */

const levels: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '\x1b[90m' },
  20: { name: 'DEBUG', color: '\x1b[90m' },
  30: { name: 'INFO', color: '\x1b[32m' },
  40: { name: 'WARN', color: '\x1b[33m' },
  50: { name: 'ERROR', color: '\x1b[31m' },
  60: { name: 'FATAL', color: '\x1b[35m' },
};
const reset = '\x1b[0m';
const dim = '\x1b[2m';

/** Keys shown in their own place on the line, or not at all (every line has them). */
const placed = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'reqId', 'req', 'res', 'responseTime', 'err']);

type Rec = Record<string, unknown>;

function value(v: unknown): string {
  const text = typeof v === 'string' ? (/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)) : JSON.stringify(v);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function clock(time: unknown): string {
  const d = new Date(typeof time === 'string' || typeof time === 'number' ? time : Date.now());
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

export interface PrettyState {
  /** `GET /url` of requests whose incoming line was read, by request id, until they complete. */
  requests: Map<string, string>;
}

export const newPrettyState = (): PrettyState => ({ requests: new Map() });

const requestOf = (req: unknown): string | undefined => {
  const r = req as { method?: string; url?: string } | undefined;
  return r?.method ? `${r.method} ${r.url ?? ''}` : undefined;
};

/** The text of one log record, or undefined when it prints nothing (a request's incoming line). */
export function formatRecord(rec: Rec, state: PrettyState, color: boolean): string | undefined {
  const reqId = typeof rec.reqId === 'string' ? rec.reqId : undefined;
  if (rec.msg === 'incoming request' && reqId) {
    const seen = requestOf(rec.req);
    if (seen) state.requests.set(reqId, seen);
    // A server that never completes a request (a crash) must not grow this without bound.
    if (state.requests.size > 10_000) state.requests.delete(state.requests.keys().next().value!);
    return undefined;
  }
  let msg = String(rec.msg ?? '');
  const res = rec.res as { statusCode?: number } | undefined;
  if (res?.statusCode !== undefined && (rec.msg === 'request completed' || rec.msg === 'request errored')) {
    const request = requestOf(rec.req) ?? (reqId ? state.requests.get(reqId) : undefined) ?? 'request';
    const ms = typeof rec.responseTime === 'number' ? ` ${Math.round(rec.responseTime)} ms` : '';
    msg = `${request} ${res.statusCode}${ms}${rec.msg === 'request errored' ? ' (errored)' : ''}`;
  }
  if (reqId && rec.msg !== 'incoming request') state.requests.delete(reqId);

  const level = levels[Number(rec.level)] ?? { name: String(rec.level), color: '' };
  const paint = (code: string, text: string) => (color ? `${code}${text}${reset}` : text);
  const parts = [paint(dim, clock(rec.time)), paint(level.color, level.name.padEnd(5))];
  if (typeof rec.component === 'string') parts.push(paint(dim, `[${rec.component}]`));
  parts.push(msg);
  const fields = Object.entries(rec)
    .filter(([k, v]) => !placed.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  const err = rec.err as { message?: string; stack?: string } | undefined;
  if (err?.message) fields.push(`err=${value(err.message)}`);
  let line = parts.join(' ') + (fields.length ? `  ${paint(dim, fields.join(' '))}` : '');
  if (err?.stack && Number(rec.level) >= 50) line += `\n${paint(dim, err.stack.replace(/^/gm, '    '))}`;
  return line;
}

/** A pino destination writing readable lines to `out` (a terminal). */
export function prettyDestination(out: NodeJS.WritableStream, color: boolean): { write(chunk: string): boolean } {
  const state = newPrettyState();
  return {
    write(chunk: string) {
      for (const text of chunk.split('\n')) {
        if (!text) continue;
        let line: string | undefined;
        try {
          line = formatRecord(JSON.parse(text) as Rec, state, color);
        } catch {
          line = text;
        }
        if (line !== undefined) out.write(`${line}\n`);
      }
      return true;
    },
  };
}
