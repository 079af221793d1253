/**
 * What kind of failure an incident's cause is. The cause is the first failing region's error as
 * the probe agent wrote it ("Timed out after 10000 ms", "Unexpected status 503", "DNS lookup
 * failed for db.internal (ENOTFOUND)", a TLS library's message): fine for the team, but a public
 * status page may not show host names or error texts. Its kind says enough there.
 */
export const causeKinds = ['timeout', 'status', 'refused', 'dns', 'tls', 'other'] as const;
export type CauseKind = (typeof causeKinds)[number];

// In the order they are tried: a TLS handshake that timed out is a timeout.
const patterns: readonly (readonly [CauseKind, RegExp])[] = [
  ['timeout', /\btim(ed|e)[ -]?out\b|\bETIMEDOUT\b|\bno response within\b/i],
  ['status', /\bstatus\b(\D{0,3}\d{3}\b|$)/i],
  ['refused', /\brefused\b|\bECONNREFUSED\b|\bECONNRESET\b|\bconnection reset\b/i],
  ['dns', /\bDNS\b|\bENOTFOUND\b|\bEAI_AGAIN\b/i],
  ['tls', /\bTLS\b|\bSSL\b|\bcertificate\b|\bCERT_/i],
];

export function causeKind(cause: string): CauseKind {
  for (const [kind, pattern] of patterns) if (pattern.test(cause)) return kind;
  return 'other';
}
