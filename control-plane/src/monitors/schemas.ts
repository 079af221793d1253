import { z } from 'zod';
import {
  Assertion,
  AssertionOutcome,
  CertificateInfo,
  CheckDetails,
  MAX_ASSERTIONS,
  MonitorType,
  monitorTypes,
  settingsOf,
} from '../../../shared/src/contracts/checks.ts';
import { HttpMethod } from '../../../shared/src/contracts/monitoring.ts';
import { dependsOnField, SubjectRefSchema } from '../dependencies/schemas.ts';
import { ProjectSummary } from '../projects/schemas.ts';
import { defaultExpiryDays } from './expiry-warnings.ts';

/** Every code 200-299: what `valid_http_codes` means when it is left out. */
export const defaultValidHttpCodes = Array.from({ length: 100 }, (_, i) => 200 + i);

const httpUrl = z
  .url({ protocol: /^(https?|tcp|dns|icmp|wss?|grpcs?)$/, hostname: /.+/ })
  .max(2048)
  .describe(
    'An http or https URL. Credentials written into it (`https://user:pass@host/`) become `basic_auth_username` and the write-only `basic_auth_password`: the URL is stored and returned without them, and sending them together with either basic-auth field (not null) is a 422 on `url`. Extension: monitors of another `type` take its scheme: `tcp://host:port`, `dns://name.to.look.up`, `icmp://host`, `ws://` or `wss://`, `grpc://host:port` or `grpcs://host:port` (docs/checks.md).',
  );
const region = z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'A region is lower-case letters, digits and -, up to 32.');

/** Tags a monitor may carry, and what one may be (stored trimmed and in lower case). */
export const MAX_TAGS = 10;
const tagPattern = /^[A-Za-z0-9](?:[A-Za-z0-9 ._-]{0,30}[A-Za-z0-9])?$/;
const tagRule = '1 to 32 letters, digits, spaces, dots, dashes or underscores, starting and ending with a letter or digit';
const tag = (field: string) => z.string().trim().toLowerCase().regex(tagPattern, `The ${field} field takes a tag: ${tagRule}.`);
const tags = z
  .array(tag('tags'))
  .max(MAX_TAGS)
  // Tags that differ only in case or surrounding spaces are one tag.
  .overwrite((list) => [...new Set(list)])
  .describe(
    `Extension: up to ${MAX_TAGS} labels to sort and filter monitors by (\`prod\`, \`eu west\`, \`checkout\`). A tag is 1 to 32 letters, digits, spaces, \`.\`, \`_\` or \`-\`, starting and ending with a letter or digit; stored trimmed and in lower case, each once. Left out on create: none; left out on update: kept.`,
  );

/**
 * The settings of each type, for the OpenAPI document: the field is validated by the monitor's
 * type (check-spec.ts), so the document lists every type's settings as the shapes it may take.
 */
const settingsDocs = monitorTypes.map((type) => {
  const { $schema: _drop, ...schema } = z.toJSONSchema(settingsOf[type], { io: 'input' });
  return { title: `${type} settings`, ...schema };
});

/** Thresholds an expiry warning list may hold. */
export const MAX_EXPIRY_THRESHOLDS = 10;
const expiryDays = (what: string) =>
  z
    .array(z.number().int().min(1).max(365))
    .max(MAX_EXPIRY_THRESHOLDS)
    // One warning per threshold, the most distant first: the order is the list's meaning.
    .overwrite((list) => [...new Set(list)].sort((a, b) => b - a))
    .describe(
      `Extension: days before ${what} at which to warn, each once (whole days, 1 to 365, at most ${MAX_EXPIRY_THRESHOLDS}; stored without repeats, the most distant first). Default [30, 14, 7, 1]; [] turns the warning off. Left out on update: kept.`,
    );

/** Fields a create and an update share, with the spec's bounds. */
const writable = {
  name: z.string().trim().min(1).max(255),
  url: httpUrl,
  valid_http_codes: z.array(z.number().int().min(100).max(599)).min(1).max(500),
  basic_auth_username: z.string().max(255).nullable(),
  basic_auth_password: z.string().max(255).nullable().describe('Write-only: accepted, stored sealed, never returned.'),
  _method: HttpMethod.describe('The HTTP method of the check (returned as `method`).'),
  active: z.boolean(),
  interval: z.number().int().min(5).max(86_400).describe('Extension: seconds between checks.'),
  timeout: z.number().int().min(1).max(60).describe('Extension: seconds a check may take; never above interval.'),
  regions: z
    .array(region)
    .min(1)
    .max(50)
    .nullable()
    .describe('Extension: regions to check from; null means every region with a live agent.'),
  quorum: z
    .number()
    .int()
    .min(1)
    .max(50)
    .nullable()
    .describe(
      'Extension: failing regions that put the monitor down (k of the n regions voting); null: a majority of them. Never more than the regions voting: when some abstain (degraded or silent), those left decide. At most the number of `regions` when they are listed.',
    ),
  confirm_down: z
    .number()
    .int()
    .min(1)
    .max(10)
    .describe('Extension: consecutive failing rounds (checks of every region for one slot) before the monitor is down. Default 1.'),
  confirm_up: z
    .number()
    .int()
    .min(1)
    .max(10)
    .describe('Extension: consecutive passing rounds before a down monitor is up again. Default 1.'),
  flap_threshold: z
    .number()
    .int()
    .min(2)
    .max(100)
    .nullable()
    .describe(
      'Extension: more state changes than this within `flap_window_seconds` mark the monitor flapping: one message says so, its changes are then not sent one by one, and one message says when it has settled (no change for a whole window) and how it is then. Null (the default): not detected.',
    ),
  flap_window_seconds: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .describe('Extension: the window flapping is counted over, and how long without a change settles it. Default 600.'),
  depends_on: dependsOnField,
  alert_regional: z
    .boolean()
    .describe(
      'Extension: also send regional incidents (failing in some regions, fewer than the quorum: the monitor stays up) to the integrations, as monitor.regional_down and monitor.regional_up. Default false: they are recorded and shown, not sent.',
    ),
  alert_degraded: z
    .boolean()
    .describe(
      'Extension: also send degraded periods (up, but `degraded` assertions fail in a quorum of regions: status 4) to the integrations, as monitor.degraded and monitor.restored. Default false: they are recorded and shown, not sent.',
    ),
  integration_ids: z.array(z.uuid()).max(100).describe("Extension: integrations of the same project that receive this monitor's alerts."),
  follow_redirects: z.boolean().describe('Extension: follow up to 5 redirects.'),
  tags,
  type: MonitorType.describe(
    "Extension: what the monitor checks: `http` (the default: the spec's HTTP check), `tcp`, `dns`, `icmp`, `websocket`, `grpc` (grpc.health.v1) or `multistep` (a sequence of HTTP requests). The `url` scheme follows the type.",
  ),
  settings: z
    .record(z.string(), z.unknown())
    .meta({ anyOf: settingsDocs })
    .describe(
      "Extension: the type's settings (HttpSettings, TcpSettings, DnsSettings, IcmpSettings, WebSocketSettings, GrpcSettings, MultistepSettings in docs/checks.md); unknown keys are refused. Header values, request bodies and gRPC metadata are write-only: stored sealed, returned as null, and a null sent back keeps the stored value. Left out on create: the type's defaults; on update: kept.",
    ),
  assertions: z
    .array(Assertion)
    .max(MAX_ASSERTIONS)
    .describe(
      `Extension: up to ${MAX_ASSERTIONS} conditions the check must meet besides its type's own rule (HTTP: an accepted status code). A failing one fails the check (severity \`down\`) or makes the monitor degraded (\`degraded\`). Left out on create: none; on update: kept.`,
    ),
  certificate_expiry_days: expiryDays('the certificate the checks see expires (monitor.certificate_expiring)'),
  domain_expiry_days: expiryDays("the registration of the monitor's domain runs out (monitor.domain_expiring)"),
};

function timeoutWithinInterval(v: { interval?: number | undefined; timeout?: number | undefined }, ctx: z.RefinementCtx) {
  if (v.interval !== undefined && v.timeout !== undefined && v.timeout > v.interval) {
    ctx.addIssue({ code: 'custom', path: ['timeout'], message: 'The timeout field must not be greater than the interval.' });
  }
}

/** The message for a quorum above the regions listed, or undefined when it fits. */
export function quorumProblem(quorum: number | null | undefined, regions: readonly string[] | null | undefined): string | undefined {
  if (quorum == null || regions == null || quorum <= regions.length) return undefined;
  return `The quorum field must not be greater than the number of regions (${regions.length}).`;
}

function quorumWithinRegions(
  v: { quorum?: number | null | undefined; regions?: string[] | null | undefined; interval?: number; timeout?: number },
  ctx: z.RefinementCtx,
) {
  timeoutWithinInterval(v, ctx);
  const problem = quorumProblem(v.quorum, v.regions);
  if (problem) ctx.addIssue({ code: 'custom', path: ['quorum'], message: problem });
}

export const MonitorCreateBody = z
  .object({
    ...writable,
    project_id: z.uuid(),
    valid_http_codes: writable.valid_http_codes.optional(),
    basic_auth_username: writable.basic_auth_username.optional(),
    basic_auth_password: writable.basic_auth_password.optional(),
    _method: writable._method.default('GET'),
    active: writable.active.default(true),
    interval: writable.interval.default(60),
    timeout: writable.timeout.optional(),
    regions: writable.regions.optional(),
    quorum: writable.quorum.optional(),
    confirm_down: writable.confirm_down.default(1),
    confirm_up: writable.confirm_up.default(1),
    flap_threshold: writable.flap_threshold.optional(),
    flap_window_seconds: writable.flap_window_seconds.default(600),
    depends_on: writable.depends_on.optional(),
    alert_regional: writable.alert_regional.default(false),
    alert_degraded: writable.alert_degraded.default(false),
    integration_ids: writable.integration_ids.optional(),
    follow_redirects: writable.follow_redirects.default(true),
    tags: writable.tags.optional(),
    type: writable.type.default('http'),
    settings: writable.settings.optional(),
    assertions: writable.assertions.optional(),
    certificate_expiry_days: writable.certificate_expiry_days.default(() => [...defaultExpiryDays]),
    domain_expiry_days: writable.domain_expiry_days.default(() => [...defaultExpiryDays]),
  })
  .superRefine(quorumWithinRegions);
export type MonitorCreateBody = z.infer<typeof MonitorCreateBody>;

/** PUT: the fields present are replaced, the others kept. `project_id` is not part of it (ignored). */
export const MonitorUpdateBody = z
  .object(
    Object.fromEntries(Object.entries(writable).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof writable]: z.ZodOptional<(typeof writable)[K]>;
    },
  )
  .superRefine(quorumWithinRegions);
export type MonitorUpdateBody = z.infer<typeof MonitorUpdateBody>;

export const monitorStatuses = { pending: 0, up: 1, down: 2, paused: 3, degraded: 4 } as const;

export const Monitor = z
  .object({
    id: z.uuid(),
    name: z.string(),
    url: z.string().describe('Never holds credentials: those sent in it are kept as basic auth.'),
    project_id: z.uuid(),
    valid_http_codes: z.array(z.number().int()),
    status: z
      .number()
      .int()
      .describe(
        '0 pending (no result yet), 1 up, 2 down, 3 paused (active is false). Extension: 4 degraded (up, but `degraded` assertions fail in a quorum of its regions; docs/checks.md).',
      ),
    basic_auth_username: z.string().nullable(),
    method: HttpMethod,
    active: z.boolean(),
    interval: z.number().int(),
    timeout: z.number().int(),
    regions: z.array(z.string()).nullable(),
    quorum: z.number().int().nullable().describe('Extension: failing regions that put the monitor down; null: a majority of those voting.'),
    confirm_down: z.number().int().describe('Extension: consecutive failing rounds before down.'),
    confirm_up: z.number().int().describe('Extension: consecutive passing rounds before up again.'),
    flap_threshold: z.number().int().nullable().describe('Extension: changes within the window that make it flapping; null: not detected.'),
    flap_window_seconds: z.number().int(),
    flapping_since: z.string().nullable().describe('Extension: when it started flapping; null when it is not.'),
    depends_on: z.array(SubjectRefSchema).describe('Extension: the monitors and heartbeats it depends on (none: an empty list).'),
    alert_regional: z.boolean().describe('Extension: regional incidents are sent too.'),
    alert_degraded: z.boolean().describe('Extension: degraded periods are sent too.'),
    degraded_regions: z
      .array(z.string())
      .describe('Extension: the regions of its open degraded period (status 4); empty when it is not degraded.'),
    failing_regions: z
      .array(z.string())
      .describe('Extension: the regions of its open regional incident (failing there, fewer than the quorum); empty when none.'),
    snoozed_until: z
      .string()
      .nullable()
      .describe('Extension: its alerts are held until then (POST /monitors/{id}/snooze); null when not snoozed.'),
    integration_ids: z.array(z.uuid()),
    follow_redirects: z.boolean(),
    tags: z.array(z.string()).describe('Extension: the labels of the monitor, in lower case (none: an empty list).'),
    type: MonitorType.describe('Extension: what the monitor checks (http unless set).'),
    settings: z
      .record(z.string(), z.unknown())
      .describe("Extension: the type's settings, header values, request bodies and metadata values as null (write-only)."),
    assertions: z.array(Assertion).describe('Extension: the conditions the check must meet (none: an empty list).'),
    certificate_expiry_days: z
      .array(z.number().int())
      .describe('Extension: days before the certificate expires at which the monitor warns, most distant first ([]: never).'),
    domain_expiry_days: z
      .array(z.number().int())
      .describe("Extension: days before the domain's registration runs out at which the monitor warns, most distant first ([]: never)."),
    certificate: CertificateInfo.nullable().describe(
      'Extension: the latest certificate its checks saw (TLS checks only), `days_left` counted from now; null when none has been seen.',
    ),
    domain: z
      .object({
        name: z.string().describe('The registrable domain of the URL host (example.com for api.example.com), as looked up.'),
        expires_at: z
          .string()
          .nullable()
          .describe(
            'When its registration runs out; null until looked up, or when the registry publishes no date. Kept through a failed lookup.',
          ),
        registrar: z.string().nullable(),
        checked_at: z.string().nullable().describe('When it was last looked up (RDAP, once a day); null before the first lookup.'),
        error: z
          .string()
          .nullable()
          .describe(
            'Why the last lookup failed (a timeout, no RDAP service for the TLD, a domain the registry does not know); null when it answered.',
          ),
      })
      .nullable()
      .describe(
        'Extension: the registration of the domain of its URL host, looked up daily (docs/checks.md); null for an IP address, a single-label name or a reserved name (example.com, .test, .internal).',
      ),
    created_at: z.string(),
    updated_at: z.string(),
    uptime: z.number().describe('Percent of time not in an incident over the trailing 30 days (or since creation), 3 decimals.'),
    degraded_percent: z
      .number()
      .describe('Extension: percent of the same window spent degraded (counted apart: degraded time is not downtime), 3 decimals.'),
    last_checked: z.string().describe('"12 seconds ago"; "never" before the first check.'),
    incidents_count: z.number().int(),
    last_incident_duration: z.number().int().describe('Seconds; 0 when there has been none.'),
    project: ProjectSummary,
  })
  .meta({ id: 'Monitor' });
export type Monitor = z.infer<typeof Monitor>;

export const MonitorListQuery = z.object({
  project_id: z.uuid().optional(),
  tag: tag('tag').optional().describe('Extension: only the monitors carrying this tag (matched in lower case).'),
});

export const CheckResultView = z
  .object({
    region: z.string(),
    scheduled_at: z.string(),
    checked_at: z.string(),
    ok: z.boolean(),
    status_code: z.number().int().nullable(),
    timings: z
      .object({ dns: z.number(), connect: z.number(), tls: z.number(), ttfb: z.number(), total: z.number() })
      .describe('Milliseconds.'),
    error: z.object({ class: z.string(), message: z.string() }).nullable(),
    attempts: z.number().int(),
    agent_id: z.string(),
    degraded: z.boolean().optional().describe('Extension: the check passed but a `degraded` assertion failed. Left out when false.'),
    assertions: z
      .array(AssertionOutcome)
      .optional()
      .describe("Extension: every assertion's outcome, in the monitor's order; left out when the monitor has none."),
    details: CheckDetails.optional().describe(
      'Extension: what the check saw beyond status and timings (certificate, DNS answers, ping figures, steps).',
    ),
  })
  .meta({ id: 'CheckResult' });

export const IncidentView = z
  .object({
    id: z.uuid(),
    scope: z
      .enum(['global', 'regional', 'degraded'])
      .describe(
        'Extension: global, the monitor was down (counts against uptime); regional, it failed in some regions, fewer than its quorum, and stayed up (not counted; sent only when the monitor has alert_regional); degraded, it was up but degraded (not counted; sent only with alert_degraded).',
      ),
    started_at: z.string(),
    ended_at: z.string().nullable(),
    duration: z.number().int().describe('Seconds, up to now while the incident is open.'),
    cause: z.string(),
    regions: z.array(z.string()),
    evidence: z
      .array(
        z.object({
          region: z.string(),
          ok: z.boolean(),
          status_code: z.number().int().nullable(),
          error: z.string().nullable(),
          total_ms: z.number().nullable().describe('Milliseconds the check took.'),
          scheduled_at: z.string(),
          abstained: z.boolean().describe('The region was degraded when the incident opened: its result did not vote.'),
        }),
      )
      .describe(
        'Extension: what each region with a fresh result saw when the incident opened (empty for incidents older than this field).',
      ),
    dependents: z
      .array(
        z.object({
          type: z.enum(['monitor', 'heartbeat']),
          id: z.uuid(),
          name: z.string(),
          down_at: z.string(),
          alert: z
            .enum(['held', 'released', 'recovered', 'dropped'])
            .describe(
              'held: waiting with this outage; released: still down when this one ended, so it alerted then; recovered or dropped: it recovered first, nothing was sent.',
            ),
        }),
      )
      .describe('Extension: monitors and heartbeats depending on this one whose downs joined this outage (their alerts were held).'),
    joined: z
      .object({ incident_id: z.string().nullable(), parent_id: z.uuid() })
      .nullable()
      .describe(
        "Extension: the parent's outage this incident joined (a monitor parent's incident; null id for a heartbeat parent), if it did.",
      ),
  })
  .meta({ id: 'Incident' });

export const ResultsQuery = z.object({ region: z.string().max(32).optional() });
