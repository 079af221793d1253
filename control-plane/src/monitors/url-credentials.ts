import { AppError } from '../platform/errors.ts';

/** What `http://user:pass@host/` splits into: the URL without its userinfo, and the userinfo decoded. */
export interface UrlCredentials {
  url: string;
  username: string;
  /** null for `http://user@host/`, which names a user and no password. */
  password: string | null;
}

// Percent-encoding that does not decode (`%zz`) is kept as written, as clients such as curl do.
function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The credentials written into a URL, split off; undefined when it carries none. The URL is
 * read the way the probe agent reads it (WHATWG), so the address left is the one it requests.
 */
export function splitUrlCredentials(raw: string): UrlCredentials | undefined {
  if (!raw.includes('@')) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username === '' && url.password === '') return undefined;
  const username = decode(url.username);
  const password = url.password === '' ? null : decode(url.password);
  url.username = '';
  url.password = '';
  return { url: url.href, username, password };
}

/** The URL with any credentials left out: what responses, pages and events show. */
export function withoutUrlCredentials(raw: string): string {
  return splitUrlCredentials(raw)?.url ?? raw;
}

/** The columns a probe agent's credentials come from. */
export interface BasicAuthColumns {
  url: string;
  basic_auth_username: string | null;
  basic_auth_password_sealed: string | null;
}

/**
 * A stored monitor's credentials with any still written into its URL (a row stored before they
 * were split off on write) moved into the basic-auth columns, the password sealed. Where the
 * monitor also has basic_auth_username, the columns stay as they are: the probe agent let them
 * win over the URL's. The same object when the URL holds none.
 */
export function moveIntoBasicAuth<T extends BasicAuthColumns>(m: T, sealPassword: (password: string) => string): T {
  const split = splitUrlCredentials(m.url);
  if (!split) return m;
  if (m.basic_auth_username !== null) return { ...m, url: split.url };
  return {
    ...m,
    url: split.url,
    basic_auth_username: split.username,
    basic_auth_password_sealed: split.password === null ? null : sealPassword(split.password),
  };
}

const MAX_URL = 2048;
const MAX_CREDENTIAL = 255;

function invalidUrl(message: string): AppError {
  return new AppError('VALIDATION', message, { url: [message] });
}

interface CredentialFields {
  url?: string | undefined;
  basic_auth_username?: string | null | undefined;
  basic_auth_password?: string | null | undefined;
}

/**
 * Credentials in `url` become the monitor's basic auth (write-only, sealed like any password):
 * the URL is stored and answered without them, the username and password replace the stored
 * ones. Sending them in the URL and in `basic_auth_username`/`basic_auth_password` at once is a
 * conflict (422 on `url`); null in those fields is no conflict. The decoded parts keep the
 * bounds of the fields they land in.
 */
export function credentialsFromUrl<T extends CredentialFields>(body: T): T {
  if (body.url === undefined) return body;
  const split = splitUrlCredentials(body.url);
  if (!split) return body;
  if (body.basic_auth_username != null || body.basic_auth_password != null) {
    throw invalidUrl(
      'The url field must not carry credentials when basic_auth_username or basic_auth_password is given: send them in one place.',
    );
  }
  if (split.username.length > MAX_CREDENTIAL || (split.password?.length ?? 0) > MAX_CREDENTIAL) {
    throw invalidUrl(`The credentials in the url field must not be greater than ${MAX_CREDENTIAL} characters each.`);
  }
  if (split.username.includes('\u0000') || split.password?.includes('\u0000')) {
    throw invalidUrl('The credentials in the url field must not contain NUL characters.');
  }
  if (split.url.length > MAX_URL) throw invalidUrl(`The url field must not be greater than ${MAX_URL} characters.`);
  return { ...body, url: split.url, basic_auth_username: split.username, basic_auth_password: split.password };
}
