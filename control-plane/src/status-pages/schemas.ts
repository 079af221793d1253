import { z } from 'zod';
import { heartbeatStatuses } from '../heartbeats/schemas.ts';
import { MAX_ALLOWLIST, parseRange } from './access.ts';
import { overallLevels } from './overall.ts';

/** How much one page holds, and how many pages one project has. */
export const MAX_GROUPS = 50;
export const MAX_COMPONENTS = 200;
export const MAX_PAGES_PER_PROJECT = 50;

/** A refinement refusing NUL (Postgres text cannot hold it), naming the field. */
export const noNul = (field: string) =>
  [(v: string) => !v.includes('\u0000'), `The ${field} field must not contain NUL characters.`] as const;

/** A title of up to 255 characters, trimmed, not blank. */
export const titleField = (description: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(255)
    .refine(...noNul('title'))
    .describe(description);

const title = titleField('Shown as the heading of the public page.');
const description = z
  .string()
  .max(2000)
  .refine(...noNul('description'))
  .describe('Shown under the title.');

export const componentTypes = ['monitor', 'heartbeat'] as const;

export const StatusPageComponentBody = z.object({
  type: z.enum(componentTypes),
  id: z.uuid().describe('The monitor or heartbeat, of the same project as the page.'),
  display_name: z
    .string()
    .trim()
    .max(255)
    .refine(...noNul('display_name'))
    .nullable()
    .optional()
    .describe("Shown instead of the monitor's or heartbeat's own name; null or empty: its own name."),
  description: z
    .string()
    .max(1000)
    .refine(...noNul('description'))
    .default('')
    .describe('Shown under the name.'),
});
export type StatusPageComponentBody = z.infer<typeof StatusPageComponentBody>;

export const StatusPageGroupBody = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .refine(...noNul('name'))
    .describe('The heading; unique on the page (any case).'),
  components: z.array(StatusPageComponentBody).max(MAX_COMPONENTS).default([]).describe('In the order shown.'),
});
export type StatusPageGroupBody = z.infer<typeof StatusPageGroupBody>;

const groups = z
  .array(StatusPageGroupBody)
  .max(MAX_GROUPS)
  .describe(
    `Groups of components, in the order shown (at most ${MAX_GROUPS} groups and ${MAX_COMPONENTS} components in all; a monitor or heartbeat at most once). Empty: the page shows every monitor and heartbeat of the project.`,
  );

const autoPublish = z
  .boolean()
  .describe(
    'Incidents drafted from the outages of what the page shows are published at once (and resolved when the outage ends); false: they wait as drafts for a person to publish.',
  );

/** A DNS host name of two labels or more, in lower case; not an IP address. */
export const customDomain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.*[a-z])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'Give a host name such as status.example.com (letters, digits and hyphens, dot-separated; no scheme, port or path).',
  )
  .nullable()
  .describe(
    'A host name of its own (status.example.com): a request for it is answered with the page at `/`, behind a reverse proxy that terminates TLS (docs/status-pages.md). null: only the slug address.',
  );

const password = z
  .string()
  .min(8, 'Use at least 8 characters.')
  .max(200)
  .refine(...noNul('password'))
  .nullable()
  .describe(
    'Write-only. Readers must give it (once a day, in a form) to see the page and every address of it: feeds, summary, history, incidents, badges. null: no password. Never returned; `password_protected` says whether there is one.',
  );

const ipAllowlist = z
  .array(
    z
      .string()
      .trim()
      .max(64)
      .refine((v) => parseRange(v) !== undefined, 'Give an IP address or a CIDR range, such as 203.0.113.7 or 2001:db8::/32.'),
  )
  .max(MAX_ALLOWLIST)
  .nullable()
  .describe(
    `Client addresses (IPs or CIDR ranges, at most ${MAX_ALLOWLIST}) that may see the page; any other is refused (403) at every address of it. null or empty: any address.`,
  );

export const StatusPageCreateBody = z.object({
  project_id: z.uuid(),
  title,
  description: description.default(''),
  custom_domain: customDomain.optional(),
  groups: groups.default([]),
  auto_publish_incidents: autoPublish.default(false),
  password: password.optional(),
  ip_allowlist: ipAllowlist.optional(),
});
export type StatusPageCreateBody = z.infer<typeof StatusPageCreateBody>;

/** PATCH: the fields sent replace the stored ones; `groups`, when sent, replaces every group (project_id is not changed). */
export const StatusPageUpdateBody = z.object({
  title: title.optional(),
  description: description.optional(),
  custom_domain: customDomain.optional(),
  groups: groups.optional(),
  auto_publish_incidents: autoPublish.optional(),
  password: password.optional(),
  ip_allowlist: ipAllowlist.optional(),
});
export type StatusPageUpdateBody = z.infer<typeof StatusPageUpdateBody>;

export const StatusPageListQuery = z.object({ project_id: z.uuid().optional() });

const StatusPageComponent = z.object({
  type: z.enum(componentTypes),
  id: z.uuid().describe('The monitor or heartbeat.'),
  name: z.string().describe("The monitor's or heartbeat's own name."),
  display_name: z.string().nullable().describe('Shown instead of `name` when set.'),
  description: z.string(),
  status: z
    .union([z.number().int(), z.enum(heartbeatStatuses)])
    .describe("The monitor's or heartbeat's status as its own reads give it: an integer for a monitor, a word for a heartbeat."),
  in_maintenance: z.boolean().describe('A maintenance window covers it now.'),
});

export const StatusPage = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    title: z.string(),
    description: z.string(),
    slug: z.string().describe('The random part of the public address.'),
    custom_domain: z.string().nullable().describe('The host name the page also answers at, at `/`; null: none.'),
    url: z
      .string()
      .describe(
        'The public address: {public_url}/status/<slug>. Anyone with it can read the page, unless a password or an allow-list guards it.',
      ),
    groups: z.array(z.object({ name: z.string(), components: z.array(StatusPageComponent) })),
    overall: z
      .object({ level: z.enum(overallLevels), text: z.string() })
      .describe(
        "Read-only: the banner over the page's components (every monitor and heartbeat of the project when it has no groups), raised by the impact of its published incidents that are not resolved; docs/status-pages.md.",
      ),
    auto_publish_incidents: z.boolean().describe('Incidents drafted from outages are published at once.'),
    password_protected: z.boolean().describe('Read-only: readers must give a password (set with `password`).'),
    ip_allowlist: z.array(z.string()).describe('The client addresses that may see the page; empty: any.'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'StatusPage' });
export type StatusPage = z.infer<typeof StatusPage>;
export type StatusPageComponent = z.infer<typeof StatusPageComponent>;
