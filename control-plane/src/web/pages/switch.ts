import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { formOf, sessionOf, text, type WebDeps } from '../context.ts';
import { setCurrentProject } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';

const sections = [urls.monitors, urls.heartbeats, urls.triggers, urls.integrations, urls.tokens, urls.members, urls.project];

/** The project switcher: remembered in the session; the user lands in the same section of the new project. */
export function switchRoutes(app: App, deps: WebDeps): void {
  app.post(urls.switchProject, async (req, reply) => {
    const session = sessionOf(req);
    const projectId = text(formOf(req), 'project_id');
    if (!session.principal.projectIds.has(projectId)) throw new AppError('FORBIDDEN');
    await setCurrentProject(deps.ctx.sql, session.id, projectId);
    let back: string = urls.home;
    try {
      const referer = new URL(req.headers.referer ?? '');
      if (referer.host === req.headers.host) back = sections.find((s) => referer.pathname.startsWith(s)) ?? urls.home;
    } catch {
      // no usable Referer: the overview
    }
    return reply.redirect(back, 303);
  });
}
