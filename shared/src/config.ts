import { isIP } from 'node:net';
import { z } from 'zod';
import { PING_BODY_LIMIT, PING_BODY_LIMIT_MAX } from './contracts/pings.ts';

/**
 * Every setting of the service, read from the environment once at start-up.
 * README.md has a table of these; a test keeps the two in step.
 */
const port = z.coerce.number().int().min(1).max(65535);
const optionalUrl = z.url().optional();
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']).transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

/** What Fastify's trustProxy (proxy-addr) accepts as a trusted proxy: an address, a CIDR range or a named range. */
function isProxyAddress(a: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(a)) return true;
  const [ip, bits, ...rest] = a.split('/');
  const family = isIP(ip ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export const settings = {
  PORT: port.default(3000).describe('Port of the control plane (API, dashboard, ping and notify URLs).'),
  HOST: z.string().min(1).default('127.0.0.1').describe('Address the control plane listens on.'),
  PUBLIC_URL: optionalUrl.describe('The {base_url} users reach the API at. Default http://HOST:PORT.'),
  PING_BASE_URL: optionalUrl.describe('The {ping_base_url} of heartbeat ping URLs. Default PUBLIC_URL.'),
  TRIGGER_BASE_URL: optionalUrl.describe('The {trigger_base_url} of notify URLs. Default PUBLIC_URL.'),
  DATABASE_URL: optionalUrl.describe('Postgres connection URL. Unset: an embedded Postgres under DATA_DIR.'),
  NATS_URL: z
    .string()
    .regex(/^(nats|tls|wss?):\/\/\S+$/, 'must be a nats:// URL (comma-separated for a cluster)')
    .optional()
    .describe('NATS server URL(s), comma-separated. Unset: a private nats-server child under DATA_DIR.'),
  NATS_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, _ or -')
    .default('uptime')
    .describe('Prefix of every stream, bucket and subject, so deployments can share one NATS.'),
  NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1).describe('JetStream replicas of streams and buckets (3 on a cluster).'),
  NATS_SERVER_BIN: z.string().min(1).optional().describe('nats-server binary for the embedded default. Default: PATH, then /usr/sbin.'),
  DATA_DIR: z.string().min(1).default('./data').describe('Where the embedded Postgres and nats-server keep their data.'),
  REGION: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'must be lower-case letters, digits and -, up to 32')
    .default('local')
    .describe('Region of a probe agent (and of the embedded agent).'),
  AGENT_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be letters, digits, _ or -')
    .optional()
    .describe('Identity of a probe agent in its region. Default: host name and a random suffix.'),
  AGENT_PORT: port.default(3001).describe('Port of a probe agent (health, readiness).'),
  CANARY_URLS: z
    .string()
    .transform((v, ctx) => {
      const list = v
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      for (const u of list) {
        if (!z.url({ protocol: /^https?$/, hostname: /.+/ }).safeParse(u).success) {
          ctx.addIssue({ code: 'custom', message: `${u} is not an http or https URL`, input: v });
        }
      }
      if (list.length > 10) ctx.addIssue({ code: 'custom', message: 'at most 10 canaries', input: v });
      return list;
    })
    .default([])
    .describe(
      "A probe agent's canaries, comma-separated http(s) URLs that answer whenever the agent's own network works (your edge, a public anycast address). Any HTTP answer counts. When most fail, the region's results abstain instead of putting monitors down. Default: none (the control plane then compares the regions' results).",
    ),
  CANARY_INTERVAL: z.coerce.number().int().min(5).max(300).default(10).describe('Seconds between two rounds of canary checks.'),
  CHECK_SOURCE_ADDRESS: z
    .string()
    .refine((v) => isIP(v) !== 0, 'must be an IP address')
    .optional()
    .describe(
      'Local address a probe agent sends its checks and canary checks from (a host with several addresses). Default: chosen by the system.',
    ),
  METRICS_PORT: port
    .optional()
    .describe(
      'Port of /healthz, /readyz and /metrics on a control-plane process. Set apart from PORT, /metrics leaves PORT (the API, published to the world) for this port. Default: PORT.',
    ),
  PING_PORT: port.default(3002).describe("Port of a probe agent's regional ping edge (heartbeat ping URLs)."),
  PING_PARTITIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(16)
    .describe('Partitions of the PINGS stream; deadline processes share them through leases. Fixed for a deployment.'),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/\S+$/, 'must be an smtp:// or smtps:// URL')
    .optional()
    .describe('SMTP server for email integrations, e.g. smtp://user:pass@mail.example.com:587.'),
  SMTP_FROM: z.string().min(3).default('uptime@localhost').describe('Sender address of notification emails.'),
  NOTIFY_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(8)
    .describe('Delivery attempts to an integration before the delivery is dead-lettered.'),
  ALLOW_SIGNUP: bool
    .default(false)
    .describe("Let anyone create an account (user, organization, Default project) on the dashboard's sign-up page."),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(8760)
    .default(336)
    .describe('Hours a dashboard session lasts without use; each use extends it.'),
  PING_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .max(PING_BODY_LIMIT_MAX)
    .default(PING_BODY_LIMIT)
    .describe(
      `Bytes of a ping's request body (a job's output) a ping edge keeps with the ping, up to ${PING_BODY_LIMIT_MAX}; the rest is read and dropped.`,
    ),
  PING_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(60)
    .describe(
      'Pings a minute one heartbeat may send to one ping edge (bursts up to the same number); 429 with Retry-After beyond; 0 turns the limit off.',
    ),
  API_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1200)
    .describe('REST API requests a minute per token and control-plane process (bursts up to the same number); 429 beyond.'),
  STATUS_PAGE_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(30)
    .describe(
      'How long a rendered public status page is served before it is rendered again (a change it shows renders it again at once); 0 renders every request.',
    ),
  STATUS_PAGE_CACHE_PAGES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1000)
    .describe('Public status pages kept rendered in memory per control-plane process; the least recently viewed goes first.'),
  TRUST_PROXY: z
    .string()
    .transform((v, ctx) => {
      const s = v.trim();
      if (s === 'false') return false;
      if (s === 'true') {
        ctx.addIssue({
          code: 'custom',
          message: "true would take any client's X-Forwarded-For on trust: give the proxies' addresses or ranges",
          input: v,
        });
        return z.NEVER;
      }
      const list = s
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
      for (const a of list)
        if (!isProxyAddress(a))
          ctx.addIssue({
            code: 'custom',
            message: `${a} is not an IP address, a CIDR range, loopback, linklocal or uniquelocal`,
            input: v,
          });
      return list.length > 0 ? list : false;
    })
    .default(false)
    .describe(
      "Reverse proxies whose X-Forwarded-For names the client address: their IP addresses or CIDR ranges, comma-separated (loopback, linklocal, uniquelocal name those ranges). Default: none; the socket's address is the client's.",
    ),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(10_000)
    .describe(
      'Milliseconds a client has to send the headers of a request (control plane and ping edges); then 408 and the connection is closed.',
    ),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .describe('Milliseconds a client has to send a whole request, body included; then 408 and the connection is closed.'),
  HTTP_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(60_000)
    .describe(
      'Milliseconds a connection may pass without a byte either way while a request is open (a client that stops reading its answer); 0 turns it off.',
    ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(65_000)
    .describe('Milliseconds an idle kept-alive connection stays open between requests (above the 60 s of most load balancers).'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level.'),
  PG_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10).describe('Postgres connections per control-plane process.'),
  SECRET_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}=?$|^[A-Za-z0-9+/]{43}=$/, 'must be 32 random bytes in base64 (openssl rand -base64 32)')
    .optional()
    .describe('Key sealing stored secrets (basic-auth passwords, integration credentials). Unset: generated in DATA_DIR/secret.key.'),
  AGENT_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}=?$|^[A-Za-z0-9+/]{43}=$/, 'must be the value `uptime agent-key` prints')
    .optional()
    .describe('Key a probe agent opens check credentials with (`uptime agent-key` derives it from SECRET_KEY).'),
  RESULTS_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(30)
    .describe('Days raw check results are kept in Postgres (hourly rollups are kept longer).'),
  HISTORY_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(31)
    .max(3650)
    .default(90)
    .describe(
      'Days published events, finished deliveries and trigger calls are kept in Postgres (at least 31: longer than EVENTS keeps an event).',
    ),
  RDAP_BOOTSTRAP_URL: z
    .url({ protocol: /^https?$/ })
    .default('https://data.iana.org/rdap/dns.json')
    .describe(
      "Where the control plane learns which RDAP server answers for each top-level domain (RFC 9224), for the daily domain-expiry lookups. Default: IANA's file.",
    ),
  BLOCK_PRIVATE_TARGETS: bool
    .default(false)
    .describe(
      'Refuse checks of, and notifications to, loopback, private, link-local and metadata addresses (turn on for multi-tenant use).',
    ),
  ALLOWED_PRIVATE_TARGETS: z
    .string()
    .transform((v, ctx) => {
      const list = v
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
      for (const a of list) if (!isIP(a)) ctx.addIssue({ code: 'custom', message: `${a} is not an IP address`, input: v });
      return list;
    })
    .default([])
    .describe(
      'IP addresses, comma-separated, that BLOCK_PRIVATE_TARGETS still lets checks and notifications reach (an internal service the operator means to watch).',
    ),
} as const;

export const ConfigSchema = z.preprocess(
  (env) => Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([k, v]) => [k, emptyAsUndefined(v)])),
  z.object(settings),
);

type Parsed = z.infer<typeof ConfigSchema>;
export type Config = Omit<Parsed, 'PUBLIC_URL' | 'PING_BASE_URL' | 'TRIGGER_BASE_URL' | 'METRICS_PORT'> & {
  METRICS_PORT: number;
  PUBLIC_URL: string;
  PING_BASE_URL: string;
  TRIGGER_BASE_URL: string;
};

/** Settings whose values may hold credentials: never echoed back in an error. */
const secretSettings = new Set(['DATABASE_URL', 'NATS_URL', 'SECRET_KEY', 'AGENT_KEY', 'SMTP_URL']);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

/** Parses the environment. Throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = ConfigSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = String(i.path[0] ?? 'environment');
        const value = env[name];
        const shown = value === undefined || secretSettings.has(name) ? '' : ` (got ${JSON.stringify(value)})`;
        return `${name}: ${i.message}${shown}`;
      }),
    );
  }
  const c = result.data;
  const host = c.HOST.includes(':') ? `[${c.HOST}]` : c.HOST;
  const publicUrl = trimSlash(c.PUBLIC_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${c.PORT}`);
  return {
    ...c,
    METRICS_PORT: c.METRICS_PORT ?? c.PORT,
    PUBLIC_URL: publicUrl,
    PING_BASE_URL: trimSlash(c.PING_BASE_URL ?? publicUrl),
    TRIGGER_BASE_URL: trimSlash(c.TRIGGER_BASE_URL ?? publicUrl),
  };
}
