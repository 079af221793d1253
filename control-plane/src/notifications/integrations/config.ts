import { open, seal } from '../../../../shared/src/crypto.ts';
import type { IntegrationType } from '../../../../shared/src/contracts/notify.ts';
import { channelSpecs } from '../channels/index.ts';
import { DeliveryError } from '../errors.ts';

export type Settings = Record<string, unknown>;

/** Splits validated settings into what may be shown and what is sealed. */
export function splitSettings(type: IntegrationType, settings: Settings): { shown: Settings; secret: Settings } {
  const secretNames = new Set(channelSpecs[type].secrets);
  const shown: Settings = {};
  const secret: Settings = {};
  for (const [k, v] of Object.entries(settings)) {
    if (v === undefined) continue;
    (secretNames.has(k) ? secret : shown)[k] = v;
  }
  return { shown, secret };
}

export function sealSecrets(secret: Settings, key: Buffer): string | null {
  return Object.keys(secret).length === 0 ? null : seal(JSON.stringify(secret), key);
}

export function openSecrets(sealed: string | null, key: Buffer): Settings {
  return sealed ? (JSON.parse(open(sealed, key)) as Settings) : {};
}

/** Every string inside the secrets, so error texts can be scrubbed of them. */
export function secretValues(secret: Settings): string[] {
  return Object.values(secret).flatMap((v) =>
    typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).filter((x): x is string => typeof x === 'string') : [],
  );
}

/** `https://hooks.slack.com/…Xk2Q`: enough to recognise a URL, not enough to use it. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    const rest = `${u.pathname}${u.search}`;
    return rest.length > 1 ? `${u.protocol}//${u.host}/…${rest.slice(-4)}` : `${u.protocol}//${u.host}/`;
  } catch {
    return '…';
  }
}

/** The settings as a read shows them: secrets replaced by `<name>_set` and, for URLs, `<name>_hint`. */
export function viewSettings(type: IntegrationType, shown: Settings, secret: Settings): Settings {
  const view: Settings = { ...shown };
  for (const name of channelSpecs[type].secrets) {
    const value = secret[name];
    view[`${name}_set`] = value !== undefined;
    if (typeof value === 'string' && /^(https?|smtps?):\/\//.test(value)) view[`${name}_hint`] = maskUrl(value);
  }
  return view;
}

/**
 * The complete settings of a stored integration, ready to send with, and its secret strings (to
 * scrub from error texts). A failure is a permanent DeliveryError: retrying cannot fix it.
 */
export function storedSettings(
  type: IntegrationType,
  shown: Settings,
  sealed: string | null,
  key: Buffer,
): { config: Settings; secrets: string[] } {
  let secret: Settings;
  try {
    secret = openSecrets(sealed, key);
  } catch {
    throw new DeliveryError("the integration's secrets cannot be opened (was SECRET_KEY changed?)", { permanent: true });
  }
  const parsed = channelSpecs[type].config.safeParse({ ...shown, ...secret });
  if (!parsed.success) throw new DeliveryError("the integration's settings are no longer valid; update them", { permanent: true });
  return { config: parsed.data as Settings, secrets: secretValues(secret) };
}

/**
 * storedSettings, remembered per integration while its stored settings stay the same: a worker
 * sending many deliveries to one integration opens its secrets and validates its settings once,
 * not once per delivery (AES-GCM and the channel's schema were some 5% of a worker's time). The
 * stored text itself is the key, and sealing draws a new IV every time, so a change of settings or
 * secrets is a new key: an entry can never be stale. Failures are not remembered.
 */
export function settingsCache(key: Buffer, max = 1_000) {
  const cache = new Map<string, { config: Settings; secrets: string[] }>();
  return (type: IntegrationType, shown: Settings, sealed: string | null): { config: Settings; secrets: string[] } => {
    const k = `${type}\n${sealed ?? ''}\n${JSON.stringify(shown)}`;
    let hit = cache.get(k);
    if (!hit) {
      hit = storedSettings(type, shown, sealed, key);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(k, hit);
    }
    // A copy per send: a channel never shares its settings object with another send.
    return { config: { ...hit.config }, secrets: hit.secrets };
  };
}
