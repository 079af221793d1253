import { z } from 'zod';
import type { Notification } from '../../../shared/src/contracts/notify.ts';
import { evidenceSummary } from './evidence.ts';
import { causeOf, formatDuration, render, type Rendered } from './content.ts';

/**
 * Per-integration message templates (ADR 0033): `{{variable}}` substitution and nothing else, over
 * a fixed set of variables, all taken from the notification itself, so a template can never reach
 * an integration's settings or anything else secret.
 */
export const templateVariables = {
  event: 'The event kind: monitor.down, heartbeat.up, trigger.fired, integration.test...',
  title: 'The standard title ("Monitor Shop is down").',
  message: 'The standard message (what failed, why and where).',
  status: 'down, up or info.',
  'subject.name': 'The monitor, heartbeat or trigger.',
  'subject.type': 'monitor, heartbeat, trigger, project...',
  'subject.id': 'Its id.',
  'project.name': 'The project.',
  cause: 'Why it failed ("HTTP 503 (expected 200-299)", "no ping arrived within the grace period").',
  regions: 'The failing regions, comma separated.',
  evidence: 'What each region saw ("eu-west: HTTP 503 (812 ms); us-east: passed").',
  since: 'When the outage began (ISO 8601).',
  duration: 'How long it lasted, on an up ("5m 3s").',
  url: 'The monitored URL.',
  alert_id: 'The open alert, when there is one.',
  acknowledge_url: 'The link that acknowledges the alert (its page has the button).',
  snooze_url: 'The link that snoozes the alert.',
  view_url: "The monitor's or heartbeat's dashboard page.",
  occurred_at: 'When the event occurred (ISO 8601).',
} as const;
export type TemplateVariable = keyof typeof templateVariables;

const urlVariables: ReadonlySet<string> = new Set(['url', 'acknowledge_url', 'snooze_url', 'view_url']);

export const TITLE_MAX = 200;
export const BODY_MAX = 2000;

// A tag, or a lone opening or closing pair: every `{{` must start a tag and every `}}` end one.
const tokens = /\{\{([^{}]*)\}\}|\{\{|\}\}/g;

/** What is wrong with a template text, in words naming its field; undefined when nothing is. */
export function templateProblem(field: string, text: string): string | undefined {
  for (const m of text.matchAll(tokens)) {
    const at = m.index + 1;
    if (m[1] === undefined) {
      return m[0] === '{{'
        ? `The ${field} field has a {{ without its }} at character ${at}.`
        : `The ${field} field has a }} without its {{ at character ${at}.`;
    }
    const name = m[1].trim();
    if (!Object.hasOwn(templateVariables, name)) {
      return name === ''
        ? `The ${field} field has an empty tag at character ${at}.`
        : `The ${field} field uses an unknown variable {{${name}}}. Variables: ${Object.keys(templateVariables).join(', ')}.`;
    }
  }
  return undefined;
}

const templateText = (part: 'title' | 'body', max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .superRefine((text, ctx) => {
      // A title becomes an email subject and a header block: one line.
      const problem =
        part === 'title' && /[\r\n]/.test(text) ? 'The template.title field must be one line.' : templateProblem(`template.${part}`, text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** What an integration's messages say instead of the standard title and text. */
export const MessageTemplate = z
  .strictObject({
    title: templateText('title', TITLE_MAX)
      .optional()
      .describe(`Replaces the title (at most ${TITLE_MAX} characters; empty: the standard one).`),
    body: templateText('body', BODY_MAX)
      .optional()
      .describe(`Replaces the main text (at most ${BODY_MAX} characters; empty: the standard one).`),
  })
  .describe(
    `A message template (docs/messages.md): {{variable}} substitution, no logic. Variables: ${Object.keys(templateVariables).join(', ')}. ` +
      "Values are escaped for the channel's markup; the template's own text is the channel's markup (Slack mrkdwn, Discord and Teams markdown, Telegram HTML), plain text elsewhere.",
  );
export type MessageTemplate = z.infer<typeof MessageTemplate>;

/** A stored template, as reads show it (null: the standard wording). */
export const MessageTemplateView = z.object({ title: z.string().optional(), body: z.string().optional() });

/** What is stored: empty parts left out, and a template that changes nothing (`{}`) is none. */
export function storedTemplate(t: MessageTemplate | null | undefined): MessageTemplate | null {
  const out: MessageTemplate = {};
  if (t?.title) out.title = t.title;
  if (t?.body) out.body = t.body;
  return out.title === undefined && out.body === undefined ? null : out;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The values of every variable for one notification ('' when it has none). */
export function variablesOf(n: Notification, r: Rendered): Record<TemplateVariable, string> {
  const d = n.data;
  const duration = typeof d.duration_seconds === 'number' && Number.isFinite(d.duration_seconds) ? formatDuration(d.duration_seconds) : '';
  return {
    event: n.event,
    title: r.title,
    message: n.message,
    status: r.tone,
    'subject.name': n.subject.name,
    'subject.type': n.subject.type,
    'subject.id': n.subject.id,
    'project.name': n.project.name,
    cause: causeOf(d) ?? '',
    regions: Array.isArray(d.regions) ? d.regions.filter((x) => typeof x === 'string').join(', ') : '',
    evidence: evidenceSummary(d) ?? '',
    since: text(d.started_at) || text(d.down_since) || text(d.flapping_since),
    duration,
    url: /^https?:\/\//.test(text(d.url)) ? text(d.url) : '',
    alert_id: n.actions?.alert_id ?? '',
    acknowledge_url: n.actions?.acknowledge_url ?? '',
    snooze_url: n.actions?.snooze_url ?? '',
    view_url: n.actions?.view_url ?? '',
    occurred_at: n.occurred_at,
  };
}

/** Makes a value safe in a channel's markup; `url` says the value is one of the link variables. */
export type Escape = (value: string, kind: 'text' | 'url') => string;
export const asIs: Escape = (v) => v;

/** A template with its tags replaced by escaped values (it was validated when saved). */
export function fill(template: string, vars: Record<TemplateVariable, string>, escape: Escape): string {
  return template.replace(tokens, (all: string, name: string | undefined) => {
    if (name === undefined) return all;
    const key = name.trim() as TemplateVariable;
    return escape(vars[key] ?? '', urlVariables.has(key) ? 'url' : 'text');
  });
}

/** The standard layout of a notification, with its title and text as a template, if any, words them. */
export interface Composed {
  r: Rendered;
  /** The title, its values (or the whole standard title) escaped by `escape`. */
  title(escape?: Escape): string;
  /** The main text, likewise. */
  text(escape?: Escape): string;
}

export function compose(n: Notification, template: MessageTemplate | null | undefined): Composed {
  const r = render(n);
  const vars = template ? variablesOf(n, r) : undefined;
  return {
    r,
    title: (escape = asIs) => (template?.title && vars ? fill(template.title, vars, escape) : escape(r.title, 'text')),
    text: (escape = asIs) => (template?.body && vars ? fill(template.body, vars, escape) : escape(r.text, 'text')),
  };
}

/** Slack mrkdwn and Telegram HTML: &, < and > are the markup. */
export const escapeAngles: Escape = (v) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Discord and Teams markdown: emphasis, code, spoilers and link brackets inline, quotes, headings
 * and list marks at a line's start. A link variable holding a plain URL is left whole, so it stays
 * a link.
 */
export const escapeMarkdown: Escape = (v, kind) => {
  if (kind === 'url' && /^https?:\/\/[^\s<>()[\]`*|~\\]+$/.test(v)) return v;
  return v.replace(/[\\*_~`|[\]]/g, '\\$&').replace(/^(\s*)([#>-])/gm, '$1\\$2');
};
