import { z } from 'zod';
import { Assertion, AssertionOutcome, CheckDetails, MonitorType } from './checks.ts';

export const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const HttpMethod = z.enum(httpMethods);
export type HttpMethod = z.infer<typeof HttpMethod>;

/**
 * Value of KV `assignments`, key `<region>.<monitor_id>`: a monitor as a probe agent needs it.
 * Deleting the key unassigns the monitor from that region. The basic-auth password travels
 * sealed (AES-256-GCM, see shared/src/crypto.ts) and is opened by the agent just before a check.
 */
export const Assignment = z.object({
  monitor_id: z.uuid(),
  project_id: z.uuid(),
  region: z.string(),
  url: z.string(),
  method: HttpMethod,
  valid_http_codes: z.array(z.number().int().min(100).max(599)),
  basic_auth_username: z.string().nullable(),
  basic_auth_password_sealed: z.string().nullable(),
  /** Seconds between checks. */
  interval: z.number().int().min(5).max(86_400),
  /** Seconds a check may take, all redirect hops included. */
  timeout: z.number().int().min(1).max(60),
  follow_redirects: z.boolean(),
  /** The check type; left out for http (entries written before types existed). */
  type: MonitorType.optional(),
  /**
   * The type's settings as JSON, sealed whole like the basic-auth password (header values, request
   * bodies and gRPC metadata are secrets); null or left out when the monitor has none.
   */
  settings_sealed: z.string().nullable().optional(),
  /** What the check must see besides its type's own rule (docs/checks.md); left out when none. */
  assertions: z.array(Assertion).optional(),
  /** `updated_at` of the monitor this was made from: a newer one wins. */
  revision: z.string(),
  /**
   * When what this entry checks last became new (docs/adr/0027-first-check-at-once.md). The agent
   * that owns the monitor checks it once at once for a change it hears of, off the slot grid, with
   * this time as the result's `scheduled_at`. Optional: entries written before it have none.
   */
  changed_at: z.iso
    .datetime()
    .optional()
    .describe(
      'When the monitor was created, re-activated or added to this region, or its url, method, valid codes, credentials, timeout or redirect setting last changed (its updated_at then). The owning agent checks once at once for it, off the slot grid.',
    ),
});
export type Assignment = z.infer<typeof Assignment>;

export const checkErrorClasses = ['dns', 'refused', 'timeout', 'tls', 'status', 'assertion', 'other'] as const;

/**
 * One check, published on `<ns>.results.<region>.<monitor_id>` with
 * `Nats-Msg-Id: <monitor_id>:<region>:<scheduled_at ms>` (see resultMsgId), so a slot checked
 * twice, or a buffered result published twice, is stored once. A public contract: outside
 * programs consume RESULTS too (docs/streams.md).
 */
export const CheckResult = z.object({
  monitor_id: z.uuid(),
  region: z.string(),
  agent_id: z.string(),
  /** The slot this check belongs to (phase-aligned, drift-free), or the change an off-grid check was owed to. */
  scheduled_at: z.iso
    .datetime()
    .describe(
      "The slot this check belongs to, on the monitor's grid (phase + k × interval). The one check a change is owed (a new, re-activated or edited monitor, see the assignment's changed_at) carries the change's time instead, 1 ms later when that falls on a slot.",
    ),
  /** When the (last) attempt started. */
  checked_at: z.iso.datetime(),
  ok: z.boolean(),
  status_code: z.number().int().nullable(),
  /** Milliseconds per phase; 0 for a phase that did not happen (reused connection). */
  timings: z.object({
    dns: z.number().nonnegative(),
    connect: z.number().nonnegative(),
    tls: z.number().nonnegative(),
    ttfb: z.number().nonnegative(),
    total: z.number().nonnegative(),
  }),
  error: z.object({ class: z.enum(checkErrorClasses), message: z.string() }).nullable(),
  /** 2 when a failure was re-checked at once: only a confirmed failure counts against the region. */
  attempts: z.number().int().min(1).max(2),
  /** The check passed, but an assertion of severity `degraded` failed (slow but up, for example). */
  degraded: z.boolean().optional().describe('The check passed but a `degraded` assertion failed. Left out when false.'),
  assertions: z
    .array(AssertionOutcome)
    .optional()
    .describe("Every assertion's outcome, in the monitor's order; left out when the monitor has none."),
  details: CheckDetails.optional().describe(
    'What the check saw beyond status and timings (certificate, DNS answers, ping figures, steps).',
  ),
  /** The check type, left out for http. */
  type: MonitorType.optional(),
});
export type CheckResult = z.infer<typeof CheckResult>;

export function resultMsgId(r: Pick<CheckResult, 'monitor_id' | 'region' | 'scheduled_at'>): string {
  return `${r.monitor_id}:${r.region}:${Date.parse(r.scheduled_at)}`;
}
