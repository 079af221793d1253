import { domainToASCII } from 'node:url';
import sjson from 'secure-json-parse';
import { Agent, request, type Dispatcher } from 'undici';

const DAY_MS = 86_400_000;
const MAX_ANSWER_BYTES = 1024 * 1024;
/** RDAP services redirect (a thin registry to its successor, an aggregator to the registry). */
const MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const RDAP_JSON = 'application/rdap+json';

/**
 * Why a lookup failed, so the caller can tell a registry's bad moment (timeout, network, status)
 * from an answer that will not change tomorrow (no-service, not-found).
 */
export type RdapErrorKind =
  'invalid' | 'no-service' | 'not-found' | 'status' | 'timeout' | 'network' | 'too-large' | 'malformed' | 'redirects';

export class RdapError extends Error {
  constructor(
    message: string,
    readonly kind: RdapErrorKind,
  ) {
    super(message);
    this.name = 'RdapError';
  }
}

/** One HTTP answer: the parsed JSON of a 2xx, the location of a redirect, nothing otherwise. */
export interface RdapReply {
  status: number;
  location: string | null;
  body: unknown;
}

/** How one URL is fetched; it throws an RdapError when no answer came (timeout, network, size). */
export type FetchJson = (url: URL, accept: string) => Promise<RdapReply>;

export interface DomainExpiry {
  /** Null when the registry publishes no expiration date (some ccTLDs never do). */
  expiresAt: Date | null;
  registrar: string | null;
  /** The URL that gave the answer, after redirects. */
  rdapUrl: string;
}

export interface RdapClient {
  lookup(domain: string): Promise<DomainExpiry>;
  close(): Promise<void>;
}

export interface RdapClientOptions {
  /** The list of the RDAP service of every top-level domain (RFC 9224): IANA's file (RDAP_BOOTSTRAP_URL). */
  bootstrapUrl: string;
  /** undici with the time and size limits by default. */
  fetchJson?: FetchJson;
  /** Per request, the whole answer included. */
  timeoutMs?: number;
  userAgent: string;
  /** The bootstrap file changes a few times a year: it is fetched once a day by default. */
  bootstrapTtlMs?: number;
}

/** A bootstrap entry: a domain suffix (a TLD, or more labels) and its service's base URL. */
interface Service {
  suffix: string;
  base: URL;
}

/**
 * Domain registration data through RDAP: IANA's bootstrap file says which server answers for a
 * TLD, that server says when the domain expires and who its registrar is.
 */
export function createRdapClient(opts: RdapClientOptions): RdapClient {
  const bootstrapUrl = new URL(opts.bootstrapUrl);
  const bootstrapTtlMs = opts.bootstrapTtlMs ?? DAY_MS;
  const http = opts.fetchJson
    ? { fetchJson: opts.fetchJson, close: async () => {} }
    : createUndiciFetch({ timeoutMs: opts.timeoutMs ?? 10_000, userAgent: opts.userAgent });
  let bootstrap: { services: Promise<Service[]>; fetchedAt: number } | null = null;

  async function follow(start: URL, accept: string): Promise<{ reply: RdapReply; url: URL }> {
    let url = start;
    for (let redirects = 0; ; redirects++) {
      const reply = await http.fetchJson(url, accept);
      if (!REDIRECT_STATUSES.has(reply.status)) return { reply, url };
      if (redirects === MAX_REDIRECTS) throw new RdapError(`Too many RDAP redirects (more than ${MAX_REDIRECTS})`, 'redirects');
      url = redirectTarget(url, reply.location);
    }
  }

  async function fetchServices(): Promise<Service[]> {
    const { reply } = await follow(bootstrapUrl, 'application/json');
    if (reply.status < 200 || reply.status >= 300) throw new RdapError(`RDAP bootstrap answered ${reply.status}`, 'status');
    return parseBootstrap(reply.body);
  }

  /** One fetch shared by the lookups that need it at once; a failed one is not kept. */
  function services(): Promise<Service[]> {
    if (bootstrap && Date.now() - bootstrap.fetchedAt < bootstrapTtlMs) return bootstrap.services;
    const pending = fetchServices();
    const entry = { services: pending, fetchedAt: Date.now() };
    bootstrap = entry;
    pending.catch(() => {
      if (bootstrap === entry) bootstrap = null;
    });
    return pending;
  }

  return {
    async lookup(domain) {
      const name = asciiDomain(domain);
      const base = serviceFor(name, await services());
      const { reply, url } = await follow(new URL(`domain/${name}`, base), RDAP_JSON);
      if (reply.status === 404) throw new RdapError(`RDAP server answered 404 for ${name}`, 'not-found');
      if (reply.status < 200 || reply.status >= 300) throw new RdapError(`RDAP server answered ${reply.status} for ${name}`, 'status');
      if (!isRecord(reply.body)) throw new RdapError('RDAP answer is not a domain object', 'malformed');
      return { expiresAt: expirationOf(reply.body), registrar: registrarOf(reply.body), rdapUrl: url.href };
    },
    close: () => http.close(),
  };
}

/** Lower case, without the root dot, in punycode; anything else (a path, a space) is refused. */
function asciiDomain(domain: string): string {
  const ascii = domainToASCII(domain.trim().toLowerCase().replace(/\.$/, ''));
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(ascii)) throw new RdapError(`Not a domain name: ${JSON.stringify(domain)}`, 'invalid');
  return ascii;
}

function redirectTarget(from: URL, location: string | null): URL {
  const to = location === null ? null : URL.parse(location, from.href);
  if (!to || (to.protocol !== 'https:' && to.protocol !== 'http:')) {
    throw new RdapError(`RDAP server at ${from.host} sent an unusable redirect`, 'malformed');
  }
  return to;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/** RFC 9224: `services` is a list of [suffixes, base URLs]; https is preferred when both exist. */
function parseBootstrap(body: unknown): Service[] {
  if (!isRecord(body) || !Array.isArray(body.services)) throw new RdapError('RDAP bootstrap file is malformed', 'malformed');
  return body.services.flatMap((entry: unknown) => {
    if (!Array.isArray(entry) || !isStringArray(entry[0]) || !isStringArray(entry[1])) return [];
    const urls: string[] = entry[1];
    const chosen = urls.find((u) => u.startsWith('https:')) ?? urls[0];
    const base = chosen === undefined ? null : URL.parse(chosen.endsWith('/') ? chosen : `${chosen}/`);
    if (!base) return [];
    return entry[0].map((suffix) => ({ suffix: suffix.toLowerCase(), base }));
  });
}

/** The service of the longest suffix that ends the domain at a label boundary. */
function serviceFor(domain: string, services: Service[]): URL {
  let best: Service | null = null;
  for (const s of services) {
    const matches = domain === s.suffix || domain.endsWith(`.${s.suffix}`);
    if (matches && (best === null || s.suffix.length > best.suffix.length)) best = s;
  }
  if (!best) throw new RdapError(`No RDAP service for .${domain.slice(domain.lastIndexOf('.') + 1)}`, 'no-service');
  return best.base;
}

function expirationOf(answer: Record<string, unknown>): Date | null {
  const events = Array.isArray(answer.events) ? answer.events : [];
  const expiration = events.find((e: unknown) => isRecord(e) && e.eventAction === 'expiration') as Record<string, unknown> | undefined;
  if (!expiration) return null;
  const at = typeof expiration.eventDate === 'string' ? Date.parse(expiration.eventDate) : NaN;
  if (Number.isNaN(at)) throw new RdapError('RDAP answer has an unreadable expiration date', 'malformed');
  return new Date(at);
}

/** The registrar entity's full name (vCard fn), or its handle (often its IANA id) without one. */
function registrarOf(answer: Record<string, unknown>): string | null {
  const entities = Array.isArray(answer.entities) ? answer.entities : [];
  const registrar = entities.find((e: unknown) => isRecord(e) && isStringArray(e.roles) && e.roles.includes('registrar')) as
    Record<string, unknown> | undefined;
  if (!registrar) return null;
  const handle = typeof registrar.handle === 'string' && registrar.handle.trim() !== '' ? registrar.handle.trim() : null;
  return vcardFullName(registrar.vcardArray) ?? handle;
}

/** jCard (RFC 7095): ["vcard", [[name, params, type, value], ...]]. */
function vcardFullName(vcard: unknown): string | null {
  if (!Array.isArray(vcard) || !Array.isArray(vcard[1])) return null;
  for (const prop of vcard[1] as unknown[]) {
    if (Array.isArray(prop) && prop[0] === 'fn' && typeof prop[3] === 'string' && prop[3].trim() !== '') return prop[3].trim();
  }
  return null;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED']);

/**
 * Plain undici: every request bounded in time (the abort signal covers the body too) and in size,
 * and its JSON parsed with prototype-poisoning protection, as RDAP answers come from servers we
 * do not run. Error texts name the host only, never what the server sent.
 */
function createUndiciFetch(o: { timeoutMs: number; userAgent: string }): { fetchJson: FetchJson; close(): Promise<void> } {
  const agent = new Agent({ connect: { timeout: o.timeoutMs }, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs });
  const fetchJson: FetchJson = async (url, accept) => {
    try {
      const res = await request(url, {
        dispatcher: agent,
        signal: AbortSignal.timeout(o.timeoutMs),
        headers: { accept, 'user-agent': o.userAgent },
      });
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        const location = res.headers.location;
        return { status: res.statusCode, location: typeof location === 'string' ? location : null, body: null };
      }
      return { status: res.statusCode, location: null, body: parseJson(await readCapped(res, url.host), url.host) };
    } catch (err) {
      throw asRdapError(err, url.host, o.timeoutMs);
    }
  };
  return { fetchJson, close: () => agent.close() };
}

async function readCapped(res: Dispatcher.ResponseData, host: string): Promise<string> {
  const tooLarge = () => new RdapError(`RDAP answer from ${host} is larger than 1 MB`, 'too-large');
  if (Number(res.headers['content-length']) > MAX_ANSWER_BYTES) {
    res.body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop destroys the body, so the rest is never downloaded.
    if (size > MAX_ANSWER_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string, host: string): unknown {
  try {
    return sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw new RdapError(`RDAP answer from ${host} is not JSON`, 'malformed');
  }
}

function asRdapError(err: unknown, host: string, timeoutMs: number): RdapError {
  if (err instanceof RdapError) return err;
  const e = err as { name?: string; code?: string };
  // The only abort signal is the time limit, so an abort is a timeout.
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || (e.code !== undefined && TIMEOUT_CODES.has(e.code))) {
    return new RdapError(`RDAP request to ${host} timed out after ${timeoutMs} ms`, 'timeout');
  }
  return new RdapError(`RDAP request to ${host} failed (${e.code ?? e.name ?? 'unknown error'})`, 'network');
}
