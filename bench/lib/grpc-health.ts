/**
 * grpc.health.v1 for the bench's own server and its bare client, coded by hand like the agent's
 * check (its codec is not reused, so the floor owes nothing to the code it is compared with).
 * HealthCheckRequest { string service = 1; } HealthCheckResponse { ServingStatus status = 1; }.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';

export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';
export const SERVING = 1;

const SERVICE_TAG = 0x0a; // field 1, length-delimited
const STATUS_TAG = 0x08; // field 1, varint

/** Service names here are short: a one-byte length is enough. */
export function encodeRequest({ service }: { service: string }): Buffer {
  if (service === '') return Buffer.alloc(0);
  const text = Buffer.from(service, 'utf8');
  if (text.length > 0x7f) throw new Error('service name too long for the bench codec');
  return Buffer.concat([Buffer.from([SERVICE_TAG, text.length]), text]);
}

/** An object, not the bare name: grpc-js's server takes a falsy request ('') for no request at all. */
export function decodeRequest(buf: Buffer): { service: string } {
  if (buf.length === 0) return { service: '' };
  if (buf[0] !== SERVICE_TAG || buf[1] === undefined) throw new Error('unexpected HealthCheckRequest');
  return { service: buf.subarray(2, 2 + buf[1]).toString('utf8') };
}

/** Statuses here are below 128: one varint byte. */
export function encodeResponse(status: number): Buffer {
  return status === 0 ? Buffer.alloc(0) : Buffer.from([STATUS_TAG, status]);
}

export function decodeResponse(buf: Buffer): number {
  if (buf.length === 0) return 0;
  if (buf[0] !== STATUS_TAG || buf[1] === undefined) throw new Error('unexpected HealthCheckResponse');
  return buf[1];
}

export const healthService: ServiceDefinition = {
  Check: {
    path: HEALTH_CHECK_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: encodeRequest,
    requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse,
    responseDeserialize: decodeResponse,
  },
};
