import { z } from 'zod';
import type { IntegrationType } from '../../../shared/src/contracts/notify.ts';
import { channelSpecs } from '../notifications/channels/index.ts';
import type { Form } from './context.ts';

/**
 * Form fields for an integration type, read off its channel's settings schema, so a new
 * channel (or a new setting) shows up on the dashboard without a template of its own.
 */
export interface ConfigField {
  name: string;
  kind: 'text' | 'secret' | 'select' | 'list' | 'lines';
  required: boolean;
  help: string | undefined;
  options: string[];
  placeholder: string;
}

/**
 * The schema under optional, default and pipe (a transform after a check) wrappers: the base
 * type, whether the setting may be left out, and its default, which parsing "nothing" gives.
 */
function unwrap(schema: z.ZodType): { base: z.ZodType; optional: boolean; fallback: unknown } {
  let s = schema;
  let optional = false;
  let fallback: unknown;
  for (;;) {
    if (s instanceof z.ZodOptional) {
      optional = true;
      s = s.unwrap() as z.ZodType;
    } else if (s instanceof z.ZodDefault) {
      optional = true;
      fallback = s.parse(undefined);
      s = s.unwrap() as z.ZodType;
    } else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else return { base: s, optional, fallback };
  }
}

function kindOf(name: string, base: z.ZodType, secrets: ReadonlySet<string>): ConfigField['kind'] {
  if (base instanceof z.ZodArray) return 'list';
  if (base instanceof z.ZodRecord) return 'lines';
  if (base instanceof z.ZodEnum) return 'select';
  return secrets.has(name) ? 'secret' : 'text';
}

export function configFields(type: IntegrationType): ConfigField[] {
  const spec = channelSpecs[type];
  const secrets = new Set(spec.secrets);
  return Object.entries(spec.config.shape as Record<string, z.ZodType>).map(([name, schema]) => {
    const { base, optional, fallback } = unwrap(schema);
    const kind = kindOf(name, base, secrets);
    return {
      name,
      kind,
      required: !optional,
      help: schema.description ?? base.description,
      options: base instanceof z.ZodEnum ? base.options.map(String) : [],
      placeholder: fallback === undefined ? '' : String(fallback),
    };
  });
}

/** The settings a form carries (`config.<name>`), as the integration API takes them; empty fields are left out. */
export function readConfig(type: IntegrationType, form: Form): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of configFields(type)) {
    const raw = form[`config.${f.name}`];
    const value = (Array.isArray(raw) ? raw.at(-1) : raw)?.trim() ?? '';
    if (value === '') continue;
    if (f.kind === 'list') out[f.name] = value.split(/[\s,]+/).filter(Boolean);
    else if (f.kind === 'lines') {
      out[f.name] = Object.fromEntries(
        value
          .split(/\r?\n/)
          .filter((l) => l.trim())
          .map((l) => {
            const i = l.indexOf(':');
            return i < 0 ? [l.trim(), ''] : [l.slice(0, i).trim(), l.slice(i + 1).trim()];
          }),
      );
    } else out[f.name] = value;
  }
  return out;
}

export const typeLabels: Record<IntegrationType, string> = {
  webhook: 'Webhook',
  slack: 'Slack',
  discord: 'Discord',
  teams: 'Microsoft Teams',
  telegram: 'Telegram',
  email: 'Email',
  pagerduty: 'PagerDuty',
  ntfy: 'ntfy',
};
