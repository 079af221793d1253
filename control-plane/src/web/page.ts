import type { FastifyRequest } from 'fastify';
import { sessionOf, type WebDeps } from './context.ts';
import { html, type Html } from './html.ts';
import { appPage, pageHead, type Chrome, type NavKey } from './layout.ts';
import type { ProjectChoice } from '../projects/workspace.ts';
import { loadWorkspace } from '../projects/workspace.ts';
import { urls } from './urls.ts';

export interface PageContext extends Chrome {
  /** The project the dashboard shows; null when the user belongs to no project at all. */
  project: ProjectChoice | null;
}

export async function pageContext(req: FastifyRequest, deps: WebDeps, title: string, active: NavKey): Promise<PageContext> {
  const session = sessionOf(req);
  const workspace = await loadWorkspace(deps.ctx.sql, session);
  return { title, active, session, workspace, assets: deps.assets, project: workspace.current };
}

export function render(pc: PageContext, body: Html): Html {
  return appPage(pc, body);
}

/** A page holding one form, in a card: new and edit pages, and their form shown again with errors. */
export function formPage(pc: PageContext, head: Html, form: Html): Html {
  return appPage(
    pc,
    html`${head}
      <div class="card"><div class="card-body">${form}</div></div>`,
  );
}

/** What a page shows when the user has no project yet (their organization's were all deleted). */
export function noProject(pc: PageContext): Html {
  return appPage(
    pc,
    html`${pageHead(pc.title)}
      <div class="card">
        <div class="empty">
          <h2>No project yet</h2>
          <p>Monitors and heartbeats live in projects. Create one to get started.</p>
          <a class="btn btn-primary" href="${urls.project}">Create a project</a>
        </div>
      </div>`,
  );
}
