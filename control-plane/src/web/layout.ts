import { csrfInput } from './components.ts';
import { html, raw, type Child, type Html } from './html.ts';
import type { WebSession } from '../accounts/sessions.ts';
import { urls } from './urls.ts';
import type { Workspace } from '../projects/workspace.ts';

export interface AssetHrefs {
  css: string;
  js: string;
  icon: string;
}

export type NavKey =
  | 'overview'
  | 'monitors'
  | 'heartbeats'
  | 'alerts'
  | 'maintenance'
  | 'status-pages'
  | 'triggers'
  | 'integrations'
  | 'tokens'
  | 'members'
  | 'project';

export interface Chrome {
  title: string;
  active: NavKey;
  session: WebSession;
  workspace: Workspace;
  assets: AssetHrefs;
}

const icons: Record<NavKey, string> = {
  overview: '<path d="M3 10.5 10 4l7 6.5V17a1 1 0 0 1-1 1h-4v-5H8v5H4a1 1 0 0 1-1-1z"/>',
  monitors: '<path d="M2 10h4l2-5 4 10 2-5h4"/>',
  heartbeats: '<path d="M10 17s-7-4.3-7-9a3.8 3.8 0 0 1 7-2 3.8 3.8 0 0 1 7 2c0 4.7-7 9-7 9z"/>',
  alerts: '<path d="M10 3a4.5 4.5 0 0 0-4.5 4.5V11L4 14h12l-1.5-3V7.5A4.5 4.5 0 0 0 10 3zM8.5 16.5a1.6 1.6 0 0 0 3 0"/>',
  maintenance:
    '<path d="M12.6 3.2a4.2 4.2 0 0 0-4.9 5.5L2.8 13.6a1.8 1.8 0 0 0 2.6 2.6l4.9-4.9a4.2 4.2 0 0 0 5.5-4.9l-2.5 2.5-2.4-.6-.6-2.4z"/>',
  'status-pages': '<rect x="2.5" y="3.5" width="15" height="13" rx="2"/><path d="M2.5 7.5h15M6 11h3M6 13.5h6"/>',
  triggers: '<path d="M11 2 4 11h5l-1 7 7-9h-5z"/>',
  integrations: '<path d="M7 3v4M13 3v4M5 7h10v3a5 5 0 0 1-10 0zM10 15v3"/>',
  tokens: '<circle cx="7" cy="10" r="3.5"/><path d="M10.5 10H18v3M15 10v2"/>',
  members: '<circle cx="7.5" cy="7" r="3"/><path d="M2 17c0-3 2.5-5 5.5-5s5.5 2 5.5 5M13 4.5a3 3 0 0 1 0 5.5M15 12c2 .5 3 2.3 3 5"/>',
  project:
    '<circle cx="10" cy="10" r="2.6"/><path d="M10 2v2.5M10 15.5V18M2 10h2.5M15.5 10H18M4.3 4.3l1.8 1.8M13.9 13.9l1.8 1.8M4.3 15.7l1.8-1.8M13.9 6.1l1.8-1.8"/>',
};

function icon(key: NavKey): Html {
  return raw(
    `<svg class="nav-icon" viewBox="0 0 20 20" fill="none" stroke="currentColor" stroke-width="1.7" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">${icons[key]}</svg>`,
  );
}

const brandMark = raw(
  '<svg class="brand-mark" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" fill="#2f5fd0"/><path d="M5 17h6l3-7 4 13 3-8 2 2h4" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round"/></svg>',
);

function head(title: string, assets: AssetHrefs, extra: Child = ''): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title}</title>
        <link rel="icon" href="${assets.icon}" type="image/svg+xml" />
        <link rel="stylesheet" href="${assets.css}" />
        <script src="${assets.js}" defer></script>
        ${extra}
      </head>
    </html>`;
}

function navLink(key: NavKey, href: string, label: string, active: NavKey): Html {
  return html`<a href="${href}" ${key === active ? html` aria-current="page"` : ''}>${icon(key)}<span>${label}</span></a>`;
}

function switcher(c: Chrome): Html {
  const { projects, current } = c.workspace;
  if (projects.length === 0) return html``;
  const orgs = [...new Map(projects.map((p) => [p.organizationId, p.organizationName])).entries()];
  return html`<form class="switcher" method="post" action="${urls.switchProject}">
    ${csrfInput(c.session.csrfToken)}
    <label for="project-switcher">Project</label>
    <select id="project-switcher" name="project_id" data-autosubmit aria-label="Project">
      ${orgs.map(
        ([orgId, orgName]) =>
          html`<optgroup label="${orgName}">
            ${projects
              .filter((p) => p.organizationId === orgId)
              .map((p) => html`<option value="${p.id}" ${p.id === current?.id ? html` selected` : ''}>${p.name}</option>`)}
          </optgroup>`,
      )}
    </select>
    <button type="submit" class="btn btn-sm js-hide">Switch</button>
  </form>`;
}

/** A signed-in page: sidebar (brand, project switcher, navigation, who is signed in) and content. */
export function appPage(c: Chrome, body: Html): Html {
  const flash = c.session.flash;
  return html`${head(`${c.title} · uptime`, c.assets)}
<body>
<div class="shell">
  <aside class="sidebar">
    <a class="brand" href="${urls.home}">${brandMark}<span>uptime</span></a>
    ${switcher(c)}
    <nav class="nav" aria-label="Main">
      ${navLink('overview', urls.home, 'Overview', c.active)}
      ${navLink('monitors', urls.monitors, 'Monitors', c.active)}
      ${navLink('heartbeats', urls.heartbeats, 'Heartbeats', c.active)}
      ${navLink('alerts', urls.alerts, 'Alerts', c.active)}
      ${navLink('maintenance', urls.maintenance, 'Maintenance', c.active)}
      ${navLink('status-pages', urls.statusPages, 'Status pages', c.active)}
      ${navLink('triggers', urls.triggers, 'Triggers', c.active)}
      ${navLink('integrations', urls.integrations, 'Integrations', c.active)}
      <div class="nav-section">Settings</div>
      ${navLink('project', urls.project, 'Project', c.active)}
      ${navLink('members', urls.members, 'Members', c.active)}
      ${navLink('tokens', urls.tokens, 'API tokens', c.active)}
    </nav>
    <div class="whoami">
      <span class="email" title="${c.session.email}">${c.session.email}</span>
      <form method="post" action="${urls.signOut}" class="inline">${csrfInput(c.session.csrfToken)}<button type="submit" class="btn btn-sm">Sign out</button></form>
    </div>
  </aside>
  <main id="main">
    ${flash ? html`<div class="flash" role="status">${flash}</div>` : ''}
    ${body}
  </main>
</div>
</body>
</html>`;
}

/** Sign-in and sign-up: one centred card. */
export function authPage(assets: AssetHrefs, title: string, body: Html): Html {
  return html`${head(`${title} · uptime`, assets)}
<body>
<div class="auth"><div class="auth-card">
  <a class="brand" href="${urls.home}">${brandMark}<span>uptime</span></a>
  ${body}
</div></div>
</body>
</html>`;
}

/** Public pages (status pages, errors for visitors): no navigation, nothing private. */
export function publicPage(assets: AssetHrefs, title: string, body: Html, extraHead: Child = ''): Html {
  return html`${head(title, assets, extraHead)}
<body>
<div class="public">${body}</div>
</body>
</html>`;
}

/** A page a link in a message opens (an alert's action, a subscription's confirm or unsubscribe): one card saying what it does. */
export function linkActionPage(assets: AssetHrefs, title: string, body: Html, extraHead: Child = ''): Html {
  return publicPage(
    assets,
    title,
    html`<div class="card link-action">
      <div class="card-body">${body}</div>
    </div>`,
    extraHead,
  );
}

export function pageHead(title: Child, opts: { sub?: Child; actions?: Child; pill?: Child } = {}): Html {
  return html`<div class="page-head">
    <div>
      <div class="title-row">
        <h1>${title}</h1>
        ${opts.pill ?? ''}
      </div>
      ${opts.sub ? html`<div class="sub">${opts.sub}</div>` : ''}
    </div>
    ${opts.actions ? html`<div class="actions">${opts.actions}</div>` : ''}
  </div>`;
}
