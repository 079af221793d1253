import { isIP } from 'node:net';
import {
  schemesOf,
  settingsOf,
  type Assertion,
  type HeaderEntry,
  type MonitorSettings,
  type MonitorType,
} from '../../../shared/src/contracts/checks.ts';
import { assertionProblem, jsonPathProblem, patternProblem } from '../../../shared/src/checks/assertions.ts';
import { AppError } from '../platform/errors.ts';

/**
 * What a monitor checks beyond the spec's fields (ADR 0034): its type, the type's settings and its
 * assertions, validated together (the URL scheme follows the type; each assertion must suit it)
 * with every problem named by its field. Secrets in the settings (header and metadata values,
 * request bodies) are write-only: `merged` fills the nulls of an update from what is stored.
 */

type Problems = Record<string, string[]>;
const add = (p: Problems, field: string, message: string): void => {
  (p[field] ??= []).push(message);
};

type Settings = Record<string, unknown>;

const secretLists = ['headers', 'metadata'] as const;

/** The settings with every secret value taken out: what the API shows and the database keeps in the clear. */
export function redactSettings(settings: Settings): Settings {
  const out: Settings = { ...settings };
  for (const list of secretLists) {
    if (Array.isArray(out[list])) out[list] = (out[list] as HeaderEntry[]).map((h) => ({ name: h.name, value: null }));
  }
  if ('body' in out) out['body'] = null;
  if (Array.isArray(out['steps'])) out['steps'] = (out['steps'] as Settings[]).map(redactSettings);
  return out;
}

/** Header entries whose value is null take the stored value of the same name (case-insensitive). */
function keepHeaders(sent: HeaderEntry[], stored: unknown): HeaderEntry[] {
  const old = new Map(((Array.isArray(stored) ? stored : []) as HeaderEntry[]).map((h) => [h.name.toLowerCase(), h.value]));
  return sent.map((h) => (h.value === null ? { name: h.name, value: old.get(h.name.toLowerCase()) ?? null } : h));
}

/** The settings sent, with the secrets a null left out taken from the stored ones. */
export function mergedSecrets(sent: Settings, stored: Settings | null): Settings {
  if (stored === null) return sent;
  const out: Settings = { ...sent };
  for (const list of secretLists) if (Array.isArray(out[list])) out[list] = keepHeaders(out[list] as HeaderEntry[], stored[list]);
  if (out['body'] === null || out['body'] === undefined) {
    if (typeof stored['body'] === 'string') out['body'] = stored['body'];
  }
  if (Array.isArray(out['steps'])) {
    const old = Array.isArray(stored['steps']) ? (stored['steps'] as Settings[]) : [];
    out['steps'] = (out['steps'] as Settings[]).map((step, i) => {
      // A step keeps the secrets of the stored step of the same name, or at the same place.
      const match = old.find((o) => o['name'] === step['name']) ?? old[i] ?? null;
      return mergedSecrets(step, match);
    });
  }
  return out;
}

function missingSecrets(settings: Settings, prefix: string, p: Problems): void {
  for (const list of secretLists) {
    const entries = settings[list];
    if (!Array.isArray(entries)) continue;
    (entries as HeaderEntry[]).forEach((h, i) => {
      if (h.value === null)
        add(p, `${prefix}${list}.${i}.value`, `The ${list === 'headers' ? 'header' : 'metadata entry'} ${h.name} needs a value.`);
    });
  }
  if (Array.isArray(settings['steps'])) (settings['steps'] as Settings[]).forEach((s, i) => missingSecrets(s, `${prefix}steps.${i}.`, p));
}

function checkUrl(type: MonitorType, raw: string, p: Problems): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return add(p, 'url', 'The url field must be a valid URL.');
  }
  const scheme = url.protocol.slice(0, -1);
  const schemes = schemesOf[type];
  if (!schemes.includes(scheme)) {
    return add(p, 'url', `A ${type} monitor takes a ${schemes.map((s) => `${s}://`).join(' or ')} URL.`);
  }
  if (type === 'tcp' && url.port === '') add(p, 'url', 'A tcp monitor needs a port: tcp://host:port.');
  if ((type === 'tcp' || type === 'dns' || type === 'icmp' || type === 'grpc') && (url.pathname.length > 1 || url.search !== '')) {
    add(p, 'url', `A ${type} URL is only ${type === 'dns' ? 'the name to look up' : 'a host and port'}: no path or query.`);
  }
}

function checkAssertions(list: readonly Assertion[], type: MonitorType, prefix: string, p: Problems): void {
  list.forEach((a, i) => {
    const problem = assertionProblem(a, type);
    if (problem) add(p, `${prefix}${i}.${problem.field}`, problem.message);
  });
}

function checkSteps(settings: Settings, p: Problems): void {
  const steps = settings['steps'] as Array<{
    url: string;
    assertions: Assertion[];
    extract: Array<{ name: string; source: string; path: string }>;
  }>;
  const known = new Set<string>();
  steps.forEach((step, i) => {
    const prefix = `settings.steps.${i}.`;
    // Variables are filled at check time; the URL must be an http(s) URL with any value in them.
    const used = [...step.url.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1]!);
    for (const v of used) if (!known.has(v)) add(p, `${prefix}url`, `{{${v}}} is not extracted by an earlier step.`);
    let url: URL | undefined;
    try {
      url = new URL(step.url.replace(/\{\{[^}]*\}\}/g, 'x'));
    } catch {
      add(p, `${prefix}url`, 'A step url must be a valid http or https URL.');
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') add(p, `${prefix}url`, 'A step url must be http or https.');
    checkAssertions(step.assertions, 'http', `${prefix}assertions.`, p);
    step.extract.forEach((x, j) => {
      const problem = x.source === 'json' ? jsonPathProblem(x.path) : x.source === 'body' ? patternProblem(x.path) : undefined;
      if (problem) add(p, `${prefix}extract.${j}.path`, problem);
      known.add(x.name);
    });
  });
}

function checkResolver(settings: Settings, p: Problems): void {
  const r = settings['resolver'];
  if (typeof r !== 'string') return;
  if (isIP(r) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(r)) {
    add(p, 'settings.resolver', 'The resolver is a host name or an IP address.');
  }
}

export interface CheckSpec {
  type: MonitorType;
  url: string;
  /** The settings as sent (secrets of an update still null where kept). */
  settings: Settings | undefined;
  assertions: readonly Assertion[];
}

/**
 * The monitor's settings in full (defaults applied, kept secrets filled in), or a 422 naming every
 * bad field. `stored`: the full settings stored for this monitor when the type is unchanged.
 */
export function validateCheck(spec: CheckSpec, stored: Settings | null): MonitorSettings {
  const p: Problems = {};
  checkUrl(spec.type, spec.url, p);
  const sent = mergedSecrets(spec.settings ?? {}, stored);
  const parsed = settingsOf[spec.type].strict().safeParse(sent);
  let settings: MonitorSettings | undefined;
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = ['settings', ...issue.path.map(String)].join('.');
      add(
        p,
        path,
        issue.code === 'unrecognized_keys' ? `Unknown setting for a ${spec.type} monitor: ${issue.keys.join(', ')}.` : issue.message,
      );
    }
  } else {
    settings = parsed.data as MonitorSettings;
    missingSecrets(settings as Settings, 'settings.', p);
    if (spec.type === 'multistep') checkSteps(settings as Settings, p);
    if (spec.type === 'dns') checkResolver(settings as Settings, p);
  }
  checkAssertions(spec.assertions, spec.type, 'assertions.', p);
  const fields = Object.keys(p);
  if (fields.length > 0 || settings === undefined) {
    throw new AppError('VALIDATION', p[fields[0]!]?.[0] ?? 'The given data was invalid.', p);
  }
  return settings;
}

/** Whether the settings are the type's defaults with nothing secret: an http monitor like the spec's, whose assignment carries none. */
export function isPlain(type: MonitorType, settings: MonitorSettings, assertions: readonly Assertion[]): boolean {
  return type === 'http' && assertions.length === 0 && JSON.stringify(settings) === JSON.stringify(settingsOf.http.parse({}));
}
