import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { causeKind, type CauseKind } from '../../control-plane/src/monitors/cause-kind.ts';

describe('the kind of an incident cause', () => {
  const rows: [string, CauseKind][] = [
    // as the probe agent writes them
    ['Timed out after 10000 ms', 'timeout'],
    ['Unexpected status 503', 'status'],
    ['Connection refused', 'refused'],
    ['DNS lookup failed for db.internal (ENOTFOUND)', 'dns'],
    ['TLS error: certificate has expired', 'tls'],
    ['Too many redirects (more than 5)', 'other'],
    ['Check cancelled', 'other'],
    // an error class alone (a result without a message)
    ['timeout', 'timeout'],
    ['status', 'status'],
    ['refused', 'refused'],
    ['dns', 'dns'],
    ['tls', 'tls'],
    ['other', 'other'],
    // other shapes
    ['timeout: no response within 10 s', 'timeout'],
    ['status 503: Service Unavailable', 'status'],
    ['connect ECONNREFUSED 10.0.0.7:443', 'refused'],
    ['read ECONNRESET', 'refused'],
    ['getaddrinfo EAI_AGAIN api.internal', 'dns'],
    ['TLS handshake timed out', 'timeout'],
    ['', 'other'],
    ['the status page of 2024', 'other'],
  ];
  for (const [cause, kind] of rows) {
    it(`files ${JSON.stringify(cause)} as ${kind}`, () => assert.equal(causeKind(cause), kind));
  }
});
