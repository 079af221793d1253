import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { customDomainPages } from '../../status-pages/service.ts';
import { httpDate, notModified, snapshotCache, type Rendered, type SnapshotCache } from '../../status-pages/snapshots.ts';
import { queryText, sendHtml, type WebDeps } from '../context.ts';
import { hostName } from '../host.ts';
import { renderError } from '../errors.ts';
import { PRIVATE_CACHE_CONTROL, type StatusPageAccess } from './status-page-access.ts';

/** Where the database announces a change to what a status page shows (migration 0030). */
export const STATUS_PAGE_CHANGES = 'status_page_changes';

/**
 * What is kept of a page: the page itself (whole and fragment), its feeds with its JSON summary,
 * and, keyed by page and month or incident, its history and its incidents' own pages.
 */
export type Document = 'page' | 'feeds' | 'history' | 'incident';

/** Each public form of a page: from which document, with which content type, open to other sites' scripts or not. */
const renditions = {
  full: { doc: 'page', type: 'text/html; charset=utf-8', cors: false },
  fragment: { doc: 'page', type: 'text/html; charset=utf-8', cors: false },
  atom: { doc: 'feeds', type: 'application/atom+xml; charset=utf-8', cors: true },
  rss: { doc: 'feeds', type: 'application/rss+xml; charset=utf-8', cors: true },
  summary: { doc: 'feeds', type: 'application/json; charset=utf-8', cors: true },
  history: { doc: 'history', type: 'text/html; charset=utf-8', cors: false },
  incident: { doc: 'incident', type: 'text/html; charset=utf-8', cors: false },
} as const satisfies Record<string, { doc: Document; type: string; cors: boolean }>;

export type Rendition = keyof typeof renditions;

/** `detail` names the month (`YYYY-MM`) of a history, or the incident of an incident's page. */
export type ServeStatusPage = (
  req: FastifyRequest,
  reply: FastifyReply,
  slug: string,
  rendition: Rendition,
  detail?: string,
) => Promise<FastifyReply>;

/** The key of a page's month or incident in its document's cache; the renderer splits it again. */
export const detailKey = (slug: string, detail: string) => `${slug}/${detail}`;

/** What a page's own host name serves besides `/`, by path. */
const hostPaths: Record<string, Rendition> = { '/feed.atom': 'atom', '/feed.rss': 'rss', '/summary.json': 'summary' };

const MISSING = 'There is no status page at this address.';
const NO_INCIDENT = 'There is no such incident on this status page.';

const SLUG = /^[A-Za-z0-9_-]{22}$/;

/** A DNS name (not an IP address, not a single label such as localhost). */
const isDomainName = (host: string) => /^(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*$/.test(host);

/** Whether Accept-Encoding takes gzip (not refused with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Serves public status pages from snapshots (ADR 0039): one render per change or maximum age,
 * whatever the number of viewers. Changes arrive through LISTEN/NOTIFY from triggers on what
 * pages show, so any writer's change (an API edit, a check result, a deadline actor) drops the
 * snapshot at once; when the listening connection comes back, every snapshot is dropped, since
 * what was announced while it was away is lost.
 */
export function publicStatusPages(
  app: App,
  deps: WebDeps,
  renderers: Record<Document, (slug: string) => Promise<Rendered | undefined>>,
  access: StatusPageAccess,
): ServeStatusPage {
  const { ctx } = deps;
  const maxAgeMs = ctx.config.STATUS_PAGE_MAX_AGE_SECONDS * 1000;
  const log = ctx.log.child({ component: 'status-page-snapshots' });
  // One cache per document, so a page whose feeds nobody reads never renders them.
  const caches = Object.fromEntries(
    (Object.keys(renderers) as Document[]).map((doc) => [
      doc,
      snapshotCache({
        render: renderers[doc],
        now: () => ctx.now().getTime(),
        maxAgeMs,
        maxPages: ctx.config.STATUS_PAGE_CACHE_PAGES,
        onError: (err, key) => log.warn({ err, slug: key, document: doc }, 'status page not rendered again; the previous one is served'),
      }),
    ]),
  ) as Record<Document, SnapshotCache>;
  const everyCache = Object.values(caches);
  if (maxAgeMs > 0) {
    const onChange = (payload: string) => {
      const [kind, id] = payload.split(':');
      if (!id) return;
      domainsStale = true;
      for (const cache of everyCache) {
        if (kind === 'project') cache.invalidate({ projectId: id });
        else if (kind === 'page') cache.invalidate({ pageId: id });
      }
    };
    const listening = ctx.sql
      .listen(STATUS_PAGE_CHANGES, onChange, () => everyCache.forEach((cache) => cache.clear()))
      .catch((err: unknown) => {
        log.warn({ err }, 'not listening for status page changes; pages refresh at their maximum age only');
        return undefined;
      });
    app.addHook('onClose', async () => {
      await (await listening)?.unlisten().catch(() => {});
    });
  }
  // Host names of pages, read again after any announced change (and on every request without the change feed).
  let domains: Map<string, string> | undefined;
  let domainsStale = true;
  let domainsLoading: Promise<Map<string, string>> | undefined;
  const domainMap = (): Promise<Map<string, string>> => {
    if (domains && !domainsStale && maxAgeMs > 0) return Promise.resolve(domains);
    domainsLoading ??= (async () => {
      domainsStale = false;
      try {
        domains = await customDomainPages(ctx);
        return domains;
      } finally {
        domainsLoading = undefined;
      }
    })();
    return domainsLoading;
  };
  const ownHost = new URL(ctx.config.PUBLIC_URL).hostname.toLowerCase();

  // A request for `/` (or a feed, or the summary) at another host name than the app's is a page's
  // custom domain, or nothing: the Host header only picks which page is shown (the snapshot is the
  // page's, whatever the host).
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return;
    const path = req.url.split('?', 1)[0]!;
    const rendition = path === '/' ? pageRendition(req) : hostPaths[path];
    if (!rendition) return;
    const host = hostName(req.headers.host);
    if (host === undefined || host === ownHost || !isDomainName(host)) return;
    const slug = (await domainMap()).get(host);
    if (!slug) return missing(reply, rendition);
    return serve(req, reply, slug, rendition);
  });

  // At the app's own address there is no feed at the root; the routes exist so that the hook above runs for these paths.
  for (const [path, rendition] of Object.entries(hostPaths)) app.get(path, async (_req, reply) => missing(reply, rendition));

  const sMaxAge = Math.max(1, Math.min(10, ctx.config.STATUS_PAGE_MAX_AGE_SECONDS));

  const snapshotOf = (doc: Document, key: string) => (maxAgeMs > 0 ? caches[doc].get(key) : fresh(renderers[doc], key));

  const serve: ServeStatusPage = async (req, reply, slug, rendition, detail) => {
    const spec = renditions[rendition];
    if (!SLUG.test(slug)) return missing(reply, rendition);
    // A month or an incident is read as its page is: the page's own snapshot says who may, and
    // whether there is a page at all, before anything of the month or incident is rendered.
    const page = await snapshotOf(detail === undefined ? spec.doc : 'page', slug);
    if (!page) return missing(reply, rendition);
    // A private page's reader is checked against what the snapshot read of it (ADR 0041).
    const gate = await access.check(req, reply, slug, page.access, rendition === 'summary' ? 'data' : 'html');
    if (gate === 'refused') return reply;
    const snapshot = detail === undefined ? page : await snapshotOf(spec.doc, detailKey(slug, detail));
    const v = snapshot?.renditions[rendition];
    if (!snapshot || !v) return missing(reply, rendition, detail !== undefined);
    const gzipped = acceptsGzip(req.headers['accept-encoding']);
    if (spec.cors) void reply.header('access-control-allow-origin', '*');
    if (gate === 'granted') {
      // Never kept by a shared cache, nor validated: whoever asks again is checked again.
      void reply.header('cache-control', PRIVATE_CACHE_CONTROL).header('vary', 'accept-encoding, cookie');
    } else {
      void reply
        .header('cache-control', `public, max-age=${sMaxAge}, stale-while-revalidate=30`)
        .header('etag', gzipped ? v.gzipEtag : v.etag)
        .header('last-modified', httpDate(snapshot.renderedAt))
        .header('vary', 'accept-encoding');
      if (notModified(req.headers, [v.etag, v.gzipEtag], snapshot.renderedAt)) return reply.code(304).send();
    }
    if (gzipped) void reply.header('content-encoding', 'gzip');
    return reply
      .code(200)
      .header('content-type', spec.type)
      .send(gzipped ? v.gzip : v.body);
  };

  /** 404 in the page's own kind: an HTML page, a JSON message for the summary, plain text for a feed. */
  function missing(reply: FastifyReply, rendition: Rendition, detail = false): FastifyReply {
    if (rendition === 'incident' && detail) return sendHtml(reply, renderError(deps, 404, NO_INCIDENT), 404);
    if (renditions[rendition].type.startsWith('text/html')) return sendHtml(reply, renderError(deps, 404, MISSING), 404);
    void reply.code(404).header('cache-control', 'no-store');
    if (rendition === 'summary') return reply.header('access-control-allow-origin', '*').send({ message: MISSING });
    return reply.header('content-type', 'text/plain; charset=utf-8').send(MISSING);
  }

  return serve;

  async function fresh(r: (slug: string) => Promise<Rendered | undefined>, slug: string) {
    const once = snapshotCache({ render: r, now: () => ctx.now().getTime(), maxAgeMs: 0, maxPages: 1 });
    return once.get(slug);
  }
}

/** The whole page, or its live part (`?fragment=1`). */
export const pageRendition = (req: FastifyRequest): Rendition => (queryText(req, 'fragment') ? 'fragment' : 'full');
