import { Client, credentials, Metadata, status, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { checkServerIdentity, connect as tlsConnect, createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { CertificateInfo } from '../../../../shared/src/contracts/checks.ts';
import { BlockedAddressError, refuses, resolveAllowed } from '../../../../shared/src/net/lookup.ts';
import { armRun, createSignalWatch, type RunCell } from '../abort.ts';
import { certificateFailure, certificateInfo, socketCertificate } from '../certificate.ts';
import { checkFailure, type CheckError } from '../classify.ts';
import { noTimings, type ProbeContext, type ProbeOutcome } from './probe.ts';

export type GrpcTarget = {
  host: string;
  port: number;
  tls: boolean;
  /** The service asked about; '' asks about the server as a whole. */
  service: string;
  /** Sent as call metadata; values are credentials, never shown. */
  metadata: Array<{ name: string; value: string }>;
  timeout_ms: number;
};

/* grpc.health.v1 by hand: two one-field messages do not justify a protobuf runtime. */

export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';

/** HealthCheckResponse.ServingStatus, by number. */
const HEALTH_STATUSES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;
const SERVING = 1;

export function healthStatusName(value: number): string {
  return HEALTH_STATUSES[value] ?? `STATUS_${value}`;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_FIXED32 = 5;
/** Field 1 with its wire type: `service` (a string) in the request, `status` (an enum) in the response. */
const SERVICE_TAG = (1 << 3) | WIRE_LENGTH;
const STATUS_TAG = (1 << 3) | WIRE_VARINT;

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  varint(): number {
    let value = 0;
    for (let i = 0; i < 10; i++) {
      const byte = this.buf[this.at++];
      if (byte === undefined) throw new Error('Truncated message');
      value += (byte & 0x7f) * 2 ** (7 * i);
      if (byte < 0x80) return value;
    }
    throw new Error('Malformed varint');
  }

  bytes(length: number): Buffer {
    if (this.at + length > this.buf.length) throw new Error('Truncated message');
    const out = this.buf.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }

  /** Passes over a field this codec does not read (a newer version of the message may add some). */
  skip(wireType: number): void {
    if (wireType === WIRE_VARINT) this.varint();
    else if (wireType === WIRE_FIXED64) this.bytes(8);
    else if (wireType === WIRE_LENGTH) this.bytes(this.varint());
    else if (wireType === WIRE_FIXED32) this.bytes(4);
    else throw new Error(`Unsupported wire type ${wireType}`);
  }
}

/** The messages as objects: grpc-js takes a falsy message ('' or 0, proto3 defaults) for no message. */
export type HealthCheckRequest = { service: string };
export type HealthCheckResponse = { status: number };

export function encodeHealthRequest({ service }: HealthCheckRequest): Buffer {
  // proto3 leaves a default (empty) string out of the encoding.
  if (service === '') return Buffer.alloc(0);
  const text = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([SERVICE_TAG]), varint(text.length), text]);
}

export function decodeHealthRequest(buf: Buffer): HealthCheckRequest {
  const reader = new Reader(buf);
  let service = '';
  while (!reader.done) {
    const tag = reader.varint();
    if (tag === SERVICE_TAG) service = reader.bytes(reader.varint()).toString('utf8');
    else reader.skip(tag & 7);
  }
  return { service };
}

export function encodeHealthResponse({ status: health }: HealthCheckResponse): Buffer {
  if (health === 0) return Buffer.alloc(0);
  return Buffer.concat([Buffer.from([STATUS_TAG]), varint(health)]);
}

/** A malformed message throws, which grpc-js reports as INTERNAL. */
export function decodeHealthResponse(buf: Buffer): HealthCheckResponse {
  const reader = new Reader(buf);
  let health = 0;
  while (!reader.done) {
    const tag = reader.varint();
    if (tag === STATUS_TAG) health = reader.varint();
    else reader.skip(tag & 7);
  }
  return { status: health };
}

/* The check. */

/** Health replies are a few bytes; a server sending megabytes is answering something else. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Node's messages (OpenSSL's verify strings) for the certificate failures: grpc-js passes on only the message. */
const VERIFY_MESSAGES: ReadonlyArray<readonly [RegExp, string]> = [
  [/certificate has expired/i, 'CERT_HAS_EXPIRED'],
  [/certificate is not yet valid/i, 'CERT_NOT_YET_VALID'],
  [/self[- ]signed certificate in certificate chain/i, 'SELF_SIGNED_CERT_IN_CHAIN'],
  [/self[- ]signed certificate/i, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
  [/unable to get local issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
  [/unable to get issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT'],
  [/unable to verify the first certificate/i, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
];
const TLS_MESSAGE = /SSL routines|TLS|handshake/;
/** The reason in OpenSSL's "C0DC...:error:0A00010B:SSL routines:<function>:<reason>:<file>:<line>:". */
const OPENSSL_REASON = /SSL routines:[^:]*:([^:]+)/;

/** What the TLS handshake showed: the leaf certificate and the host name check's verdict. */
type Presented = { certificate: CertificateInfo | null; identityError: string | null };

/** What the Health/Check call ended with. */
type CallEnd = { code: status; details: string; health: number | null };

/** Parsing the root store costs milliseconds, so each set of trusted roots gets one context. */
let defaultContext: SecureContext | undefined;
const contextsByExtraCas = new WeakMap<ReadonlyArray<string | Buffer>, SecureContext>();

function secureContext(extraCaCerts: Array<string | Buffer> | undefined): SecureContext {
  if (extraCaCerts === undefined || extraCaCerts.length === 0) return (defaultContext ??= createSecureContext());
  let context = contextsByExtraCas.get(extraCaCerts);
  if (context === undefined) {
    context = createSecureContext({ ca: [...rootCertificates, ...extraCaCerts] });
    contextsByExtraCas.set(extraCaCerts, context);
  }
  return context;
}

/**
 * Verifies the chain and the host name as every TLS check does, and keeps the certificate for the
 * result. Node calls checkServerIdentity only for a trusted chain: see untrustedCertificate.
 */
function verifyingCredentials(host: string, ctx: ProbeContext, presented: Presented): ChannelCredentials {
  return credentials.createFromSecureContext(secureContext(ctx.extraCaCerts), {
    checkServerIdentity: (_name, cert) => {
      presented.certificate = certificateInfo(cert);
      const mismatch: NodeJS.ErrnoException | undefined = checkServerIdentity(host, cert);
      presented.identityError = mismatch?.code ?? null;
      return mismatch;
    },
  });
}

const bracketed = (ip: string) => (isIP(ip) === 6 ? `[${ip}]` : ip);

/** The address to dial, checked against the address policy (a literal, or every answer for a name). */
async function chooseAddress(host: string, ctx: ProbeContext): Promise<string> {
  if (isIP(host) !== 0) {
    if (refuses(ctx.policy, host)) throw new BlockedAddressError(host);
    return host;
  }
  const [first] = await resolveAllowed(ctx.policy, ctx.resolve, host);
  if (first === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
  return first.address;
}

/**
 * One client (one connection) per check, closed when the check ends: each check then makes its
 * own TLS handshake, so the certificate it reports is the one presented now, and nothing is left
 * open between checks. A cached channel would save the handshake but hide certificate changes.
 * grpc-js cannot bind a local address, so CHECK_SOURCE_ADDRESS does not apply to the call.
 */
function openClient(ip: string, target: GrpcTarget, ctx: ProbeContext, presented: Presented): Client {
  const authority = `${bracketed(target.host)}:${target.port}`;
  const options: ChannelOptions = {
    'grpc.default_authority': authority,
    'grpc.primary_user_agent': ctx.userAgent,
    // The policy checked the address dialled: no proxy from the environment may stand in between.
    'grpc.enable_http_proxy': 0,
    // The global pool would share connections between checks of the same address.
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_retries': 0,
    'grpc.max_receive_message_length': MAX_RESPONSE_BYTES,
  };
  if (!target.tls) return new Client(`${bracketed(ip)}:${target.port}`, credentials.createInsecure(), options);
  // Dialling the address, the certificate is still checked against the host name.
  options['grpc.ssl_target_name_override'] = target.host;
  return new Client(`${bracketed(ip)}:${target.port}`, verifyingCredentials(target.host, ctx, presented), options);
}

function callMetadata(pairs: GrpcTarget['metadata']): Metadata {
  const metadata = new Metadata();
  for (const { name, value } of pairs) {
    try {
      metadata.add(name.toLowerCase(), value);
    } catch {
      throw new Error(`Invalid metadata name "${name}"`);
    }
  }
  return metadata;
}

/** Settles as `work` does, or rejects as soon as the check ends early. */
function unlessStopped<T>(cell: RunCell, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    cell.onAbort = () => reject(cell.reason);
    // Forgotten before the caller resumes, which may set its own onAbort.
    work.then(
      (value) => {
        cell.onAbort = null;
        resolve(value);
      },
      (err: unknown) => {
        cell.onAbort = null;
        reject(err);
      },
    );
  });
}

function callHealth(client: Client, service: string, metadata: Metadata, deadline: Date, cell: RunCell): Promise<CallEnd> {
  return new Promise((resolve) => {
    const call = client.makeUnaryRequest(
      HEALTH_CHECK_PATH,
      encodeHealthRequest,
      decodeHealthResponse,
      { service },
      metadata,
      { deadline },
      (err, response) => {
        cell.onAbort = null;
        resolve(
          err ? { code: err.code, details: err.details, health: null } : { code: status.OK, details: '', health: response?.status ?? 0 },
        );
      },
    );
    cell.onAbort = () => call.cancel();
  });
}

/** "connect ECONNREFUSED ..." out of grpc-js's "No connection established. Last error: Error: ... Resolution note: ...". */
function lastError(details: string): string {
  const inner = /Last error: ([\s\S]*?)\.?\s*Resolution note:/.exec(details)?.[1] ?? details;
  return inner.replace(/^Error( \[\w+\])?: /, '').trim();
}

function short(message: string): string {
  const line = message.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** A server may echo what it was sent (an "invalid token ..." reply): the metadata values stay out of results. */
function redacted(text: string, pairs: GrpcTarget['metadata']): string {
  return pairs.reduce((out, { value }) => (value === '' ? out : out.split(value).join('***')), text);
}

/** The certificate verification code a failed call shows, if that is why it failed. */
function verifyFailureCode(end: CallEnd): string | undefined {
  if (end.code !== status.UNAVAILABLE) return undefined;
  return VERIFY_MESSAGES.find(([pattern]) => pattern.test(end.details))?.[1];
}

/**
 * The certificate an untrusted server presents, read by a handshake of our own that sends
 * nothing: Node hands grpc-js the certificate only once the chain is trusted, and a failed check
 * should still show what was presented (an expiry date, the names). Only run for a check that
 * already failed on the certificate; bounded by the check's own time limit and caller.
 */
function untrustedCertificate(ip: string, target: GrpcTarget, ctx: ProbeContext, cell: RunCell): Promise<CertificateInfo | null> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: ip,
      port: target.port,
      ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
      ...(ctx.localAddress !== undefined ? { localAddress: ctx.localAddress } : {}),
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
    });
    const done = (certificate: CertificateInfo | null) => {
      cell.onAbort = null;
      socket.destroy();
      resolve(certificate);
    };
    socket.once('secureConnect', () => done(socketCertificate(socket)));
    socket.once('error', () => done(null));
    cell.onAbort = () => done(null);
  });
}

function tlsFailure(end: CallEnd, host: string, presented: Presented): CheckError | undefined {
  if (presented.identityError !== null) return certificateFailure(presented.identityError, host, presented.certificate);
  const code = verifyFailureCode(end);
  if (code !== undefined) return certificateFailure(code, host, presented.certificate);
  if (!TLS_MESSAGE.test(end.details)) return undefined;
  const error = lastError(end.details);
  return { class: 'tls', message: short(`TLS error: ${OPENSSL_REASON.exec(error)?.[1] ?? error}`) };
}

/** Why a call that ended without a health status failed. */
function callFailure(end: CallEnd, target: GrpcTarget, presented: Presented): CheckError {
  const name = status[end.code] ?? String(end.code);
  switch (end.code) {
    case status.DEADLINE_EXCEEDED:
      return { class: 'timeout', message: `Timed out after ${target.timeout_ms} ms` };
    case status.UNIMPLEMENTED:
      return { class: 'status', message: 'The server does not implement grpc.health.v1' };
    case status.NOT_FOUND:
      return { class: 'status', message: `The server does not know the service "${target.service}"` };
    case status.UNAVAILABLE: {
      if (/ECONNREFUSED/.test(end.details)) return { class: 'refused', message: 'Connection refused' };
      const tls = target.tls ? tlsFailure(end, target.host, presented) : undefined;
      if (tls !== undefined) return tls;
      return { class: 'other', message: short(`gRPC ${name}: ${redacted(lastError(end.details), target.metadata)}`) };
    }
    default:
      return { class: 'other', message: short(`gRPC ${name}: ${redacted(end.details, target.metadata)}`) };
  }
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

const watch = createSignalWatch();

/** Asks the server's grpc.health.v1 Health service about target.service; ok when it answers SERVING. */
export async function checkGrpc(target: GrpcTarget, ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const deadline = new Date(Date.now() + target.timeout_ms);
  const presented: Presented = { certificate: null, identityError: null };
  const { cell, release } = armRun(watch, target.timeout_ms, signal);
  let dnsMs = 0;
  let end: CallEnd | null = null;
  let error: CheckError | null = null;
  let client: Client | null = null;

  try {
    if (cell.reason !== null) throw cell.reason;
    const metadata = callMetadata(target.metadata);
    const ip = await unlessStopped(cell, chooseAddress(target.host, ctx));
    if (isIP(target.host) === 0) dnsMs = performance.now() - startedAt;
    client = openClient(ip, target, ctx, presented);
    end = await callHealth(client, target.service, metadata, deadline, cell);
    if (target.tls && presented.certificate === null && cell.reason === null && verifyFailureCode(end) !== undefined) {
      presented.certificate = await untrustedCertificate(ip, target, ctx, cell);
    }
    if (cell.reason !== null) error = checkFailure(null, cell.reason, target.timeout_ms);
    else if (end.code !== status.OK) error = callFailure(end, target, presented);
    else if (end.health !== SERVING) error = { class: 'status', message: `The service is ${healthStatusName(end.health ?? 0)}` };
  } catch (err) {
    error =
      err instanceof BlockedAddressError
        ? { class: 'other', message: `Target address ${err.address} is not allowed` }
        : checkFailure(err, cell.reason, target.timeout_ms);
  } finally {
    release();
    client?.close();
  }
  return outcome(end, error, presented, startedAt, dnsMs);
}

function outcome(end: CallEnd | null, error: CheckError | null, presented: Presented, startedAt: number, dnsMs: number): ProbeOutcome {
  const total = round3(performance.now() - startedAt);
  // The server answered (a health status, or a status of its own): its reply is the first byte.
  const answered = error === null || error.class === 'status';
  const health = end?.health != null ? healthStatusName(end.health) : end?.code === status.NOT_FOUND ? 'SERVICE_UNKNOWN' : undefined;
  const result: ProbeOutcome = {
    ok: error === null,
    status_code: end?.code ?? null,
    timings: { ...noTimings, dns: round3(dnsMs), ttfb: answered ? total : 0, total },
    error,
    observed: { response_time: total },
  };
  if (health !== undefined) result.observed.grpc_status = health;
  if (presented.certificate !== null) result.observed.certificate_days = presented.certificate.days_left;
  if (health !== undefined || presented.certificate !== null) {
    result.details = {
      ...(health !== undefined ? { grpc: { status: health } } : {}),
      ...(presented.certificate !== null ? { certificate: presented.certificate } : {}),
    };
  }
  return result;
}
