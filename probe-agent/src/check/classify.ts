import { CANCELLED, TIMED_OUT } from './abort.ts';
import { BlockedAddressError } from '../../../shared/src/net/lookup.ts';
import { BlockedTargetError } from './connector.ts';
import { InvalidTargetError } from './target-url.ts';

export type CheckErrorClass = 'dns' | 'refused' | 'timeout' | 'tls' | 'status' | 'assertion' | 'other';
export type CheckError = { class: CheckErrorClass; message: string };

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA', 'ENODATA', 'ESERVFAIL']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const OTHER_MESSAGES: Record<string, string> = {
  ECONNRESET: 'Connection reset by peer',
  EPIPE: 'Connection closed while sending the request',
  UND_ERR_SOCKET: 'Connection closed by the server',
  EHOSTUNREACH: 'Host unreachable',
  ENETUNREACH: 'Network unreachable',
  HPE_INVALID_CONSTANT: 'Invalid HTTP response',
  UND_ERR_HEADERS_OVERFLOW: 'Response headers too large',
};

type ErrLike = Error & { code?: unknown; hostname?: unknown; errors?: unknown; cause?: unknown };

/** The innermost error carrying a code: undici and autoSelectFamily wrap the socket's error. */
function withCode(err: unknown, depth = 0): ErrLike | null {
  if (!(err instanceof Error) || depth > 4) return null;
  const e = err as ErrLike;
  const hasCode = typeof e.code === 'string';
  if (hasCode && !Array.isArray(e.errors) && e.cause === undefined) return e;
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const found = withCode(inner, depth + 1);
    if (found !== null) return found;
  }
  const fromCause = withCode(e.cause, depth + 1);
  if (fromCause !== null) return fromCause;
  return hasCode ? e : null;
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code === 'EPROTO' || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)
  );
}

function short(message: string): string {
  const line = message.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** Maps a transport failure to the error classes users see on a result. */
export function classifyError(err: unknown, timeoutMs: number): CheckError {
  const coded = withCode(err);
  if (coded instanceof BlockedTargetError) return { class: 'other', message: coded.message };
  if (coded instanceof BlockedAddressError) return { class: 'other', message: `Target address ${coded.address} is not allowed` };
  const code = typeof coded?.code === 'string' ? coded.code : '';
  if (DNS_CODES.has(code)) {
    const host = typeof coded?.hostname === 'string' ? ` for ${coded.hostname}` : '';
    return { class: 'dns', message: `DNS lookup failed${host} (${code})` };
  }
  if (code === 'ECONNREFUSED') return { class: 'refused', message: 'Connection refused' };
  if (TIMEOUT_CODES.has(code)) return { class: 'timeout', message: `Timed out after ${timeoutMs} ms` };
  if (isTlsCode(code)) return { class: 'tls', message: short(`TLS error: ${coded?.message ?? code}`) };
  const known = OTHER_MESSAGES[code];
  if (known !== undefined) return { class: 'other', message: known };
  const message = err instanceof Error ? err.message : String(err);
  return { class: 'other', message: short(message || 'Check failed') };
}

/** Why a check failed: its own time limit, its caller, a target it cannot follow, or the transport. */
export function checkFailure(err: unknown, reason: symbol | null, timeoutMs: number): CheckError {
  if (reason === TIMED_OUT) return { class: 'timeout', message: `Timed out after ${timeoutMs} ms` };
  if (reason === CANCELLED) return { class: 'other', message: 'Check cancelled' };
  if (err instanceof InvalidTargetError) return { class: 'other', message: err.message };
  return classifyError(err, timeoutMs);
}
