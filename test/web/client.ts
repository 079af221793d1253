import { Agent, buildConnector, fetch as undiciFetch } from 'undici';

/**
 * A small browser stand-in for HTTP tests of the dashboard: a cookie jar, forms with their CSRF
 * token, redirects left visible (a test asserts where they go).
 */
export interface WebResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  setCookies: string[];
}

/** A form's fields; a list is a field repeated (checkboxes of one name). */
export type Fields = Record<string, string | readonly string[]>;

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

/** Connections from this loopback address (127.0.0.2, 127.0.0.3, ...): a client elsewhere, as the server sees it. */
function fromAddress(localAddress: string): Agent {
  const connector = buildConnector({});
  return new Agent({ connect: (options, callback) => connector({ ...options, localAddress }, callback) });
}

export function webClient(baseUrl: string, opts: { headers?: Record<string, string>; localAddress?: string } = {}) {
  const jar = new Map<string, string>();
  const dispatcher = opts.localAddress ? fromAddress(opts.localAddress) : undefined;
  // The package's own fetch honours its own dispatcher; the two fetches' types differ only in detail.
  const send = (dispatcher ? undiciFetch : fetch) as unknown as (
    url: string,
    init: Omit<RequestInit, 'dispatcher'> & { dispatcher?: Agent },
  ) => Promise<Response>;

  const remember = (setCookies: string[]) => {
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some(
        (a) => /^\s*max-age=0$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()),
      );
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };

  /** A field given a list is sent once per value, as a browser sends checked boxes of one name. */
  const encode = (form: Fields) =>
    new URLSearchParams(
      Object.entries(form).flatMap(([k, v]): [string, string][] => (typeof v === 'string' ? [[k, v]] : v.map((x) => [k, x]))),
    ).toString();

  async function request(method: string, path: string, form?: Fields, headers: Record<string, string> = {}): Promise<WebResponse> {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await send(baseUrl + path, {
      ...(dispatcher ? { dispatcher } : {}),
      method,
      redirect: 'manual',
      headers: {
        ...opts.headers,
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? encode(form) : undefined,
    });
    const setCookies = res.headers.getSetCookie();
    remember(setCookies);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location'), setCookies };
  }

  const client = {
    jar,
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    post: (path: string, form: Fields, headers?: Record<string, string>) => request('POST', path, form, headers),
    /** Submits a form the way a browser would: the CSRF token read from the page it is on. */
    async submit(pagePath: string, action: string, fields: Fields): Promise<WebResponse> {
      const page = await client.get(pagePath);
      return client.post(action, { _csrf: csrfOf(page.text), ...fields });
    },
    async signIn(email: string, password: string): Promise<WebResponse> {
      return client.submit('/app/sign-in', '/app/sign-in', { email, password });
    },
  };
  return client;
}

export type WebClient = ReturnType<typeof webClient>;
