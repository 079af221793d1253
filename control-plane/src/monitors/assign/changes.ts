import { createHash } from 'node:crypto';
import type { Assignment } from '../../../../shared/src/contracts/monitoring.ts';
import { formatTimestamp } from '../../platform/http/time.ts';

/** What the assigner remembers of an entry in KV `assignments`. */
export type StoredEntry = {
  revision: string;
  /** Digest of what the entry checks (checkTarget); undefined for a value that is no assignment. */
  target: string | undefined;
  changedAt: string | undefined;
};

/** The fields that decide what a check requests and what it accepts. */
export type CheckedFields = Pick<
  Assignment,
  | 'url'
  | 'method'
  | 'valid_http_codes'
  | 'basic_auth_username'
  | 'basic_auth_password_sealed'
  | 'timeout'
  | 'follow_redirects'
  | 'type'
  | 'settings_sealed'
  | 'assertions'
>;

/**
 * A digest of what a check requests and accepts (with the type, its settings and assertions); the
 * interval, the name or the project are not in it. The password counts by its opened text (`openPassword`), since sealing the same password
 * twice gives different text; it is hashed, never kept.
 */
export function checkTarget(a: Partial<CheckedFields>, openPassword: (sealed: string) => string | undefined): string {
  const sealed = a.basic_auth_password_sealed;
  const password = typeof sealed === 'string' ? (openPassword(sealed) ?? `sealed:${sealed}`) : null;
  const fields: unknown[] = [a.url, a.method, a.valid_http_codes, a.basic_auth_username, password, a.timeout, a.follow_redirects];
  // Only entries of monitors that use them add these: a plain http monitor's digest is as before.
  if (a.type !== undefined || typeof a.settings_sealed === 'string' || a.assertions !== undefined) {
    const settings = typeof a.settings_sealed === 'string' ? (openPassword(a.settings_sealed) ?? `sealed:${a.settings_sealed}`) : null;
    fields.push(a.type ?? 'http', settings, a.assertions ?? []);
  }
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url');
}

/** What the assigner remembers of a value read from the bucket. */
export function storedEntry(value: unknown, openPassword: (sealed: string) => string | undefined): StoredEntry {
  const a = (typeof value === 'object' && value !== null ? value : {}) as Partial<Assignment>;
  return {
    revision: typeof a.revision === 'string' ? a.revision : '',
    target: typeof a.url === 'string' ? checkTarget(a, openPassword) : undefined,
    changedAt: typeof a.changed_at === 'string' ? a.changed_at : undefined,
  };
}

/**
 * The `changed_at` of an entry about to be written, as a rule over what the bucket holds:
 * - no entry yet (a new monitor, one re-activated after a pause, a region added): the monitor's
 *   `updated_at`, the time of that write;
 * - an entry checking something else (url, method, codes, credentials, timeout, redirects): the
 *   same, the time of the edit;
 * - an entry checking the same (a rename, a new interval): the entry's own, possibly none.
 * An entry written for a region that just appeared, or after the bucket was lost, gets its
 * monitor's last write time, usually long past: agents check early only what changed lately.
 */
export function changedAt(stored: StoredEntry | undefined, target: string, revision: string): string | undefined {
  if (stored === undefined || stored.target !== target) return formatTimestamp(revision);
  return stored.changedAt;
}
