/** A URL or redirect location a check cannot follow: reported as the check's error. */
export class InvalidTargetError extends Error {}

export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new InvalidTargetError(base ? `Invalid redirect location ${raw.slice(0, 100)}` : 'Invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidTargetError(`Unsupported URL scheme ${url.protocol}`);
  }
  return url;
}

/** Parsed once per distinct URL: monitors are checked again and again with the same target. */
export function createUrlCache(maxEntries = 10_000): (raw: string) => URL {
  const urls = new Map<string, URL>();
  return (raw) => {
    let url = urls.get(raw);
    if (url === undefined) {
      url = parseUrl(raw);
      if (urls.size >= maxEntries) urls.clear();
      urls.set(raw, url);
    }
    return url;
  };
}

/** Explicit fields win over credentials written into the URL. */
export function authorizationHeader(
  target: { basic_auth_username: string | null; basic_auth_password: string | null },
  url: URL,
): string | null {
  const user = target.basic_auth_username ?? (url.username ? decodeURIComponent(url.username) : null);
  if (user === null) return null;
  const password = target.basic_auth_username !== null ? (target.basic_auth_password ?? '') : decodeURIComponent(url.password);
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The method of the request after a redirect, as browsers choose it. */
export function redirectMethod<M extends string>(status: number, method: M): M | 'GET' {
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) return 'GET';
  return method;
}
