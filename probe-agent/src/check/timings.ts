import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ConnectPhases, TimedConnector } from './connector.ts';

/** Milliseconds, 3 decimals; 0 for a phase that did not happen (e.g. a reused connection). */
export type CheckTimings = { dns: number; connect: number; tls: number; ttfb: number; total: number };

/** What one request of a check (the first, or a redirect hop) measured and received. */
export type Hop = {
  phases: ConnectPhases;
  startedAt: number;
  headersAt: number;
  status: number;
  location: string | null;
  /** Response headers (names in lower case), kept only when the check asked for them. */
  headers: Record<string, string> | null;
  /** Response body chunks, kept only when the check asked for them (up to the body limit). */
  body: Buffer[] | null;
};

const ZERO_PHASES: ConnectPhases = { dns: 0, connect: 0, tls: 0 };
const SEND_HEADERS = 'undici:client:sendHeaders';

export function newHop(): Hop {
  return { phases: ZERO_PHASES, startedAt: NaN, headersAt: NaN, status: 0, location: null, headers: null, body: null };
}

/** Hands each hop the setup phases of the socket its request goes out on. */
export type PhaseCapture = {
  /** The hop whose request undici is starting, set by its handler's onRequestStart. */
  starting: Hop | null;
  close(): void;
};

/**
 * undici calls a handler's onRequestStart and then publishes sendHeaders with the socket in one
 * synchronous step, so the hop that started last is the one writing on that socket.
 */
export function capturePhases(connector: Pick<TimedConnector, 'claim'>): PhaseCapture {
  const onSendHeaders = (message: unknown) => {
    const hop = capture.starting;
    if (hop === null) return;
    const phases = connector.claim((message as { socket: object }).socket);
    if (phases === undefined) return;
    capture.starting = null;
    hop.phases = phases;
  };
  const capture: PhaseCapture = { starting: null, close: () => unsubscribe(SEND_HEADERS, onSendHeaders) };
  subscribe(SEND_HEADERS, onSendHeaders);
  return capture;
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** The phases of every hop added up; total runs from the check's start to endedAt. */
export function checkTimings(hops: readonly Hop[], startedAt: number, endedAt: number): CheckTimings {
  let dns = 0;
  let connect = 0;
  let tls = 0;
  let ttfb = 0;
  for (const h of hops) {
    dns += h.phases.dns;
    connect += h.phases.connect;
    tls += h.phases.tls;
    if (!Number.isNaN(h.headersAt)) ttfb += h.headersAt - h.startedAt;
  }
  return { dns: round3(dns), connect: round3(connect), tls: round3(tls), ttfb: round3(ttfb), total: round3(endedAt - startedAt) };
}
