import { createHash } from 'node:crypto';
import type { Announcement } from '../../maintenance/service.ts';
import { FEED_INCIDENTS, namesOf, publicIncidents, publicLatest, type PublicIncident } from '../../status-pages/incidents/service.ts';
import { impactWords, statusWords } from '../../status-pages/incidents/rules.ts';
import type { StatusPage } from '../../status-pages/schemas.ts';
import { publicStatusPage } from '../../status-pages/service.ts';
import type { Rendered } from '../../status-pages/snapshots.ts';
import { coveredNames, summaryOf, type PublicAddresses } from '../../status-pages/summary.ts';
import type { WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { markdown } from '../markdown.ts';
import { urls } from '../urls.ts';
import { xmlElement, xmlText } from '../xml.ts';

/**
 * A status page's Atom and RSS feeds and its JSON summary (docs/status-pages.md, "Feeds and the
 * JSON summary"; ADR 0040), rendered together from one read and kept in a snapshot beside the
 * page's. Links are absolute: at the page's host name when it has one, else under PUBLIC_URL;
 * never built from a request's Host header, so every viewer gets the same bytes.
 */

interface FeedAddresses extends PublicAddresses {
  atom: string;
  rss: string;
}

function addressesOf(publicUrl: string, page: StatusPage): FeedAddresses {
  const own = `${publicUrl}${urls.statusPage(page.slug)}`;
  const host = page.custom_domain ? `${new URL(publicUrl).protocol}//${page.custom_domain}` : undefined;
  return {
    page: host ? `${host}/` : own,
    incident: (id) => `${host ?? publicUrl}${urls.statusIncident(page.slug, id)}`,
    atom: host ? `${host}/feed.atom` : `${own}/feed.atom`,
    rss: host ? `${host}/feed.rss` : `${own}/feed.rss`,
  };
}

const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
const latest = (i: PublicIncident) => i.updates[0]?.at ?? i.created_at;
const impactText = (i: PublicIncident) => (i.impact === 'none' ? impactWords.none : `${impactWords[i.impact]} impact`);

/** An entry, whatever it tells of: an incident or a maintenance notice. */
interface Entry {
  id: string;
  title: string;
  link: string;
  published: string;
  updated: string;
  category: { term: string; label: string };
  content: Html;
}

/** An incident's entry: its impact, what it affects and when, then its timeline newest first, Markdown made safe as on its page. */
function incidentEntry(i: PublicIncident, a: FeedAddresses): Entry {
  return {
    id: `urn:uuid:${i.id}`,
    title: i.title,
    link: a.incident(i.id),
    published: i.created_at,
    updated: latest(i),
    category: { term: i.impact, label: impactText(i) },
    content: html`<p>
        <strong>${statusWords[i.status]}</strong> · ${impactText(i)}${i.components.length ? ` · Affects ${i.components.join(', ')}` : ''} ·
        Began ${utc(i.created_at)}${i.resolved_at ? ` · Resolved ${utc(i.resolved_at)}` : ''}
      </p>
      ${i.updates.map(
        (u) =>
          html`<p><strong>${statusWords[u.status]}</strong> · ${utc(u.at)}</p>
            ${markdown(u.message, 3)}`,
      )}`,
  };
}

/**
 * A maintenance notice's entry, one per run of a window (a recurring window's next run is a new
 * entry); its date moves when the run begins, so a reader sees it again when it is in progress.
 */
function maintenanceEntry(m: Announcement, names: ReadonlyMap<string, string>, a: FeedAddresses): Entry {
  const hash = createHash('sha1').update(`${m.id}/${m.starts_at}`).digest('hex');
  const uuid = `${hash.slice(0, 8)}-${hash.slice(8, 12)}-5${hash.slice(13, 16)}-${((parseInt(hash[16]!, 16) & 0x3) | 0x8).toString(16)}${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
  const covered = coveredNames(m, names);
  return {
    id: `urn:uuid:${uuid}`,
    title: `${m.in_progress ? 'Maintenance in progress' : 'Scheduled maintenance'}: ${m.name}`,
    link: a.page,
    published: m.updated_at,
    updated: m.in_progress && m.starts_at > m.updated_at ? m.starts_at : m.updated_at,
    category: { term: 'maintenance', label: 'Maintenance' },
    content: html`<p>
        <strong>${m.in_progress ? 'In progress' : 'Scheduled'}</strong> · ${utc(m.starts_at)} to
        ${utc(m.ends_at)}${covered.length ? ` · Covers ${covered.join(', ')}` : ''}
      </p>
      ${m.description ? html`<p>${m.description}</p>` : ''}`,
  };
}

function atom(page: StatusPage, entries: readonly Entry[], updated: string, a: FeedAddresses): string {
  const x = xmlText;
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${x(a.atom)}</id>
<title>${x(`${page.title} status`)}</title>
${xmlElement('subtitle', page.description)}
<link rel="self" type="application/atom+xml" href="${x(a.atom)}"/>
<link rel="alternate" type="text/html" href="${x(a.page)}"/>
<updated>${x(updated)}</updated>
<author><name>${x(page.title)}</name></author>
${entries
  .map(
    (e) => `<entry>
<id>${x(e.id)}</id>
<title type="text">${x(e.title)}</title>
<link rel="alternate" type="text/html" href="${x(e.link)}"/>
<published>${x(e.published)}</published>
<updated>${x(e.updated)}</updated>
<category term="${x(e.category.term)}" label="${x(e.category.label)}"/>
<content type="html">${x(e.content.value)}</content>
</entry>`,
  )
  .join('\n')}
</feed>
`;
}

const rfc822 = (iso: string) => new Date(iso).toUTCString();

function rss(page: StatusPage, entries: readonly Entry[], updated: string, a: FeedAddresses): string {
  const x = xmlText;
  return `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
<title>${x(`${page.title} status`)}</title>
<link>${x(a.page)}</link>
<description>${x(page.description || `Incidents and maintenance of ${page.title}`)}</description>
<atom:link rel="self" type="application/rss+xml" href="${x(a.rss)}"/>
<lastBuildDate>${rfc822(updated)}</lastBuildDate>
${entries
  .map(
    (e) => `<item>
<title>${x(e.title)}</title>
<link>${x(e.link)}</link>
<guid isPermaLink="false">${x(e.id)}</guid>
<pubDate>${rfc822(e.published)}</pubDate>
<category>${x(e.category.label)}</category>
<description>${x(e.content.value)}</description>
</item>`,
  )
  .join('\n')}
</channel>
</rss>
`;
}

/**
 * The feeds and the summary of the page at `slug`; undefined when there is none. Feeds: the
 * maintenance the page announces, then its last FEED_INCIDENTS published incidents, newest first.
 * Their dates come from what they tell of (never the time of rendering), so a feed's validators
 * stay the same while nothing in it changes.
 */
export async function renderStatusPageFeeds(deps: WebDeps, slug: string): Promise<Rendered | undefined> {
  const { ctx } = deps;
  const found = await publicStatusPage(ctx, slug);
  if (!found) return undefined;
  const { page } = found;
  const now = ctx.now();
  const shown = found.groups.flatMap((g) => g.components);
  const names = namesOf(shown);
  const [incidents, current] = await Promise.all([
    publicLatest(ctx, page.id, names, FEED_INCIDENTS),
    publicIncidents(ctx, page.id, names, now),
  ]);
  const a = addressesOf(ctx.config.PUBLIC_URL, page);
  const entries = [...found.maintenance.map((m) => maintenanceEntry(m, names, a)), ...incidents.map((i) => incidentEntry(i, a))];
  const updated = entries.map((e) => e.updated).reduce((max, at) => (at > max ? at : max), page.updated_at);
  return {
    pageId: page.id,
    projectId: page.project_id,
    access: found.access,
    renditions: {
      atom: atom(page, entries, updated, a),
      rss: rss(page, entries, updated, a),
      summary: JSON.stringify(summaryOf(found, current.ongoing, now, a), null, 2),
    },
  };
}
