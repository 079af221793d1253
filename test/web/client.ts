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

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

export function webClient(baseUrl: string, opts: { headers?: Record<string, string> } = {}) {
  const jar = new Map<string, string>();

  const remember = (setCookies: string[]) => {
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };

  async function request(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<WebResponse> {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(baseUrl + path, {
      method,
      redirect: 'manual',
      headers: {
        ...opts.headers,
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookies = res.headers.getSetCookie();
    remember(setCookies);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location'), setCookies };
  }

  const client = {
    jar,
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    post: (path: string, form: Record<string, string>, headers?: Record<string, string>) => request('POST', path, form, headers),
    /** Submits a form the way a browser would: the CSRF token read from the page it is on. */
    async submit(pagePath: string, action: string, fields: Record<string, string>): Promise<WebResponse> {
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
