import { z } from 'zod';

/**
 * Check types, their settings, assertions and what a check observed (docs/adr/0034-check-types-and-assertions.md).
 * Shared by the control plane (validation, storage, the API) and the probe agent (the checks).
 */

export const monitorTypes = ['http', 'tcp', 'dns', 'icmp', 'websocket', 'grpc', 'multistep'] as const;
export const MonitorType = z.enum(monitorTypes);
export type MonitorType = z.infer<typeof MonitorType>;

/** The URL schemes each type takes in `url`. */
export const schemesOf: Record<MonitorType, readonly string[]> = {
  http: ['http', 'https'],
  tcp: ['tcp'],
  dns: ['dns'],
  icmp: ['icmp'],
  websocket: ['ws', 'wss'],
  grpc: ['grpc', 'grpcs'],
  multistep: ['http', 'https'],
};

export const assertionSources = [
  'status_code',
  'response_time',
  'body',
  'json',
  'header',
  'certificate_days',
  'dns_answer',
  'packet_loss',
  'grpc_status',
] as const;
export type AssertionSource = (typeof assertionSources)[number];

/** The sources an assertion of each type may read. */
export const sourcesOf: Record<MonitorType, readonly AssertionSource[]> = {
  http: ['status_code', 'response_time', 'body', 'json', 'header', 'certificate_days'],
  multistep: ['status_code', 'response_time', 'body', 'json', 'header', 'certificate_days'],
  tcp: ['response_time', 'body', 'certificate_days'],
  websocket: ['response_time', 'body', 'certificate_days'],
  dns: ['response_time', 'dns_answer'],
  icmp: ['response_time', 'packet_loss'],
  grpc: ['response_time', 'grpc_status', 'certificate_days'],
};

export const assertionOperators = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'matches',
  'not_matches',
  'less_than',
  'less_or_equal',
  'greater_than',
  'greater_or_equal',
  'exists',
  'not_exists',
  'in',
] as const;
export type AssertionOperator = (typeof assertionOperators)[number];

export const numericOperators: readonly AssertionOperator[] = ['less_than', 'less_or_equal', 'greater_than', 'greater_or_equal'];
export const presenceOperators: readonly AssertionOperator[] = ['exists', 'not_exists'];
export const patternOperators: readonly AssertionOperator[] = ['matches', 'not_matches'];

/** Sources whose value is a number: only comparisons, equality and `in` apply. */
export const numericSources: readonly AssertionSource[] = ['status_code', 'response_time', 'certificate_days', 'packet_loss'];
/** Sources that need a `path` (a JSONPath, a header name). */
export const pathSources: readonly AssertionSource[] = ['json', 'header'];

/** Longest regular expression an assertion may hold; patterns run on RE2 (linear time, no backtracking). */
export const MAX_PATTERN_LENGTH = 512;
export const MAX_ASSERTIONS = 20;

export const AssertionTarget = z.union([
  z.string().max(2_000),
  z.number().finite(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string().max(500), z.number().finite()])).max(100),
]);

export const Assertion = z.object({
  source: z.enum(assertionSources).describe('What the assertion reads. Each type accepts some sources (docs/checks.md).'),
  path: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('For `json`: a JSONPath (`$.status`, `$.items[0].id`); for `header`: the header name. Required by those two sources.'),
  operator: z.enum(assertionOperators),
  target: AssertionTarget.optional().describe(
    'The value compared with. A number for the comparisons, a list for `in`, a pattern (RE2 syntax) for `matches`; none for `exists`/`not_exists`.',
  ),
  severity: z
    .enum(['down', 'degraded'])
    .default('down')
    .describe(
      '`down` (the default): a failing assertion fails the check. `degraded`: the check passes but the monitor is degraded (status 4), e.g. slow but up.',
    ),
});
export type Assertion = z.infer<typeof Assertion>;
export type AssertionInput = z.input<typeof Assertion>;

export const AssertionOutcome = z
  .object({
    source: z.enum(assertionSources),
    path: z.string().optional(),
    operator: z.enum(assertionOperators),
    // Published as any JSON value (a string, number, boolean, null or list): strict validators
    // refuse a union of types, and a consumer displays these rather than branching on them.
    target: z.unknown().optional().describe("The assertion's target, as configured."),
    severity: z.enum(['down', 'degraded']),
    passed: z.boolean(),
    observed: z
      .unknown()
      .describe('What the check saw: a string (cut to 200 characters), number or boolean; null when there was nothing to read.'),
    message: z.string().optional().describe('Why it could not be evaluated, or a readable account of the failure.'),
  })
  .meta({ id: 'AssertionOutcome' });
export type AssertionOutcome = z.infer<typeof AssertionOutcome>;

/** The certificate a TLS handshake presented (the leaf). */
export const CertificateInfo = z
  .object({
    subject: z.string(),
    issuer: z.string(),
    sans: z.array(z.string()),
    valid_from: z.string(),
    valid_to: z.string(),
    days_left: z.number().describe('Days until valid_to, with a fraction; negative once expired.'),
    fingerprint256: z.string(),
  })
  .meta({ id: 'CertificateInfo' });
export type CertificateInfo = z.infer<typeof CertificateInfo>;

/** What a check saw beyond status and timings, by type; every field optional (a documented addition to RESULTS). */
export const CheckDetails = z
  .object({
    certificate: CertificateInfo.optional(),
    dns: z.object({ rcode: z.string(), answers: z.array(z.object({ type: z.string(), value: z.string(), ttl: z.number() })) }).optional(),
    icmp: z
      .object({
        sent: z.number().int(),
        received: z.number().int(),
        packet_loss: z.number().describe('Percent.'),
        rtt_min: z.number().nullable(),
        rtt_avg: z.number().nullable(),
        rtt_max: z.number().nullable(),
      })
      .optional(),
    grpc: z.object({ status: z.string() }).optional(),
    steps: z
      .array(
        z.object({
          name: z.string(),
          ok: z.boolean(),
          status_code: z.number().int().nullable(),
          total_ms: z.number(),
          error: z.string().nullable(),
        }),
      )
      .optional(),
  })
  .meta({ id: 'CheckDetails' });
export type CheckDetails = z.infer<typeof CheckDetails>;

/** A request header or gRPC metadata entry. Values are secrets: stored sealed, never returned (null in answers). */
export const HeaderEntry = z.object({
  name: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "A header name is 1 to 100 letters, digits and !#$%&'*+.^_`|~-."),
  value: z
    .string()
    .max(4_096)
    .regex(/^[^\r\n\0]*$/, 'A header value holds no line breaks.')
    .nullable()
    .describe('Write-only: stored sealed and returned as null. On update, null keeps the stored value of the header of that name.'),
});
export type HeaderEntry = z.infer<typeof HeaderEntry>;

const headers = z.array(HeaderEntry).max(20);
const requestBody = z
  .string()
  .max(65_536)
  .nullable()
  .describe('Write-only: the request body, stored sealed and returned as null. On update, null keeps the stored body; "" removes it.');
export const dnsRecordTypes = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'SRV', 'CAA', 'PTR'] as const;

export const HttpSettings = z.object({
  headers: headers.default([]).describe('Request headers sent with every check.'),
  body: requestBody.default(null),
});
export const TcpSettings = z.object({
  tls: z.boolean().default(false).describe('Open TLS after connecting (the certificate is verified and its expiry watched).'),
  send: z.string().max(4_096).nullable().default(null).describe('Text written once connected.'),
  expect: z.string().max(1_024).nullable().default(null).describe('Text the server must send back (checked as contained in what arrives).'),
});
export const DnsSettings = z.object({
  record_type: z.enum(dnsRecordTypes).default('A'),
  resolver: z
    .string()
    .max(253)
    .nullable()
    .default(null)
    .describe("The resolver asked (a host name or IP address); null: the probe host's own resolvers."),
  resolver_port: z.number().int().min(1).max(65_535).default(53),
});
export const IcmpSettings = z.object({
  count: z.number().int().min(1).max(10).default(3).describe('Echo requests per check.'),
});
export const WebSocketSettings = z.object({
  headers: headers.default([]),
  send: z.string().max(4_096).nullable().default(null).describe('A text message sent once open.'),
  expect: z.string().max(1_024).nullable().default(null).describe('Text a message from the server must contain.'),
});
export const GrpcSettings = z.object({
  service: z.string().max(255).default('').describe('The service asked about (grpc.health.v1); "" is the server as a whole.'),
  metadata: headers.default([]).describe('Call metadata (values write-only, like header values).'),
});

export const Extraction = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,39}$/, 'A variable name is a letter or _ and then up to 39 letters, digits or _.'),
  source: z.enum(['json', 'header', 'body']),
  path: z
    .string()
    .min(1)
    .max(500)
    .describe('json: a JSONPath; header: the header name; body: an RE2 pattern whose first group (or whole match) is taken.'),
});
export type Extraction = z.infer<typeof Extraction>;

export const StepSettings = z.object({
  name: z.string().trim().min(1).max(100),
  url: z.string().max(2_048).describe('An http(s) URL; `{{variable}}` takes a value extracted by an earlier step.'),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
  headers: headers.default([]),
  body: requestBody.default(null),
  valid_http_codes: z.array(z.number().int().min(100).max(599)).min(1).max(500).optional().describe('Default: 200-299.'),
  assertions: z.array(Assertion).max(MAX_ASSERTIONS).default([]),
  extract: z.array(Extraction).max(10).default([]),
  timeout: z.number().int().min(1).max(60).optional().describe('Seconds this step may take; the monitor timeout bounds the whole check.'),
});
export type StepSettings = z.infer<typeof StepSettings>;
export const MultistepSettings = z.object({
  steps: z.array(StepSettings).min(1).max(10).describe('Requests made in order; the first failure ends the check and is its evidence.'),
});

export const settingsOf = {
  http: HttpSettings,
  tcp: TcpSettings,
  dns: DnsSettings,
  icmp: IcmpSettings,
  websocket: WebSocketSettings,
  grpc: GrpcSettings,
  multistep: MultistepSettings,
} as const;
export type SettingsOf<T extends MonitorType> = z.infer<(typeof settingsOf)[T]>;
export type MonitorSettings = { [T in MonitorType]: SettingsOf<T> }[MonitorType];
