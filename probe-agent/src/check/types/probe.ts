import type { AssertionInputs } from '../../../../shared/src/checks/assertions.ts';
import type { AssertionOutcome, CheckDetails } from '../../../../shared/src/contracts/checks.ts';
import type { CheckOutcome } from '../check.ts';
import type { AddressPolicy, Resolve } from '../../../../shared/src/net/lookup.ts';
import type { CheckError } from '../classify.ts';
import type { CheckTimings } from '../timings.ts';

/**
 * What every check type hands back: the transport's verdict, the timings, and what it observed for
 * the assertions to read. A type fills the observed fields it has; assertions on a source a type
 * did not observe fail with "nothing to read".
 */
export type ProbeOutcome = {
  /** The transport worked and the type's own rule held (connected; SERVING; an answer; a reply). */
  ok: boolean;
  status_code: number | null;
  timings: CheckTimings;
  error: CheckError | null;
  observed: Observed;
  details?: CheckDetails;
};

/** What a type observed, for its assertions to read (the fields it has; others are left out). */
export type Observed = AssertionInputs;

/** What every type's check gets from the agent. */
export type ProbeContext = {
  /** BLOCK_PRIVATE_TARGETS and its exceptions: applied to every address dialled, literal or resolved. */
  policy: AddressPolicy;
  /** Host name resolution (getaddrinfo by default; tests map names to loopback). */
  resolve: Resolve;
  userAgent: string;
  /** Trusted in addition to Node's bundled roots (an internal CA, a test CA). */
  extraCaCerts?: Array<string | Buffer>;
  /** Local address checks leave from (CHECK_SOURCE_ADDRESS). */
  localAddress?: string;
  /** Bytes of a response read at most (bodies, TCP/WebSocket replies). */
  maxBodyBytes: number;
};

export const noTimings: CheckTimings = { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 };

/** One attempt of a monitor's check: the type's own verdict, then the assertions over what it observed. */
export type ProbeResult = ProbeOutcome & { assertions?: AssertionOutcome[]; degraded: boolean };

/** The HTTP checker's outcome as every type reports it (built field by field: this runs for every HTTP check). */
export function httpProbeOutcome(o: CheckOutcome): ProbeOutcome {
  const observed: Observed = { response_time: o.timings.total };
  if (o.status_code !== null) observed.status_code = o.status_code;
  if (o.body !== undefined) observed.body = o.body;
  if (o.headers !== undefined) observed.headers = o.headers;
  if (o.certificate !== undefined) observed.certificate_days = o.certificate.days_left;
  const out: ProbeOutcome = { ok: o.ok, status_code: o.status_code, timings: o.timings, error: o.error, observed };
  if (o.certificate !== undefined) out.details = { certificate: o.certificate };
  return out;
}
