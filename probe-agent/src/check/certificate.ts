import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { CertificateInfo } from '../../../shared/src/contracts/checks.ts';
import type { CheckError } from './classify.ts';

const DAY_MS = 86_400_000;

/** "CN=example.com, O=Example" from the fields Node hands over. */
function distinguishedName(fields: Record<string, string | string[] | undefined> | undefined): string {
  if (!fields) return '';
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
    .join(', ');
}

/** "DNS:a.example, IP Address:10.0.0.1" as plain names. */
function altNames(san: string | undefined): string[] {
  if (!san) return [];
  return san
    .split(/,\s*/)
    .map((s) => s.replace(/^(DNS|IP Address|URI|email):/, ''))
    .filter(Boolean);
}

/** The leaf certificate as a check reports it; null when the peer presented none. */
export function certificateInfo(cert: PeerCertificate | null | undefined, now = Date.now()): CertificateInfo | null {
  if (!cert || !cert.valid_to) return null;
  const validTo = new Date(cert.valid_to);
  const validFrom = new Date(cert.valid_from);
  if (Number.isNaN(validTo.getTime())) return null;
  return {
    subject: distinguishedName(cert.subject as unknown as Record<string, string>),
    issuer: distinguishedName(cert.issuer as unknown as Record<string, string>),
    sans: altNames(cert.subjectaltname),
    valid_from: Number.isNaN(validFrom.getTime()) ? cert.valid_from : validFrom.toISOString(),
    valid_to: validTo.toISOString(),
    days_left: Math.round(((validTo.getTime() - now) / DAY_MS) * 1000) / 1000,
    fingerprint256: cert.fingerprint256,
  };
}

/** The certificate of a TLS socket, read once the handshake got that far (even when verification failed). */
export function socketCertificate(socket: TLSSocket): CertificateInfo | null {
  try {
    const peer = socket.getPeerCertificate(false);
    return peer && Object.keys(peer).length > 0 ? certificateInfo(peer) : null;
  } catch {
    return null;
  }
}

const CHAIN_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

/**
 * A certificate failure as its own cause: expired, not valid for the host, an untrusted chain;
 * undefined for an error that is not about the certificate.
 */
export function certificateFailure(code: string, host: string, cert: CertificateInfo | null): CheckError | undefined {
  if (code === 'CERT_HAS_EXPIRED') {
    return { class: 'tls', message: cert ? `Certificate expired on ${cert.valid_to.slice(0, 10)}` : 'Certificate expired' };
  }
  if (code === 'CERT_NOT_YET_VALID') {
    return { class: 'tls', message: cert ? `Certificate not valid before ${cert.valid_from.slice(0, 10)}` : 'Certificate not yet valid' };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'ERR_TLS_CERT_ALTNAME_FORMAT') {
    return { class: 'tls', message: `Certificate is not valid for ${host}` };
  }
  if (CHAIN_CODES.has(code)) return { class: 'tls', message: `Certificate chain not trusted (${code})` };
  return undefined;
}
