import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { insertProject, updateProject } from '../../projects/repo.ts';
import { copyRow, csrfInput, field, postButton } from '../components.ts';
import { formOf, sendHtml, sessionOf, text, type WebDeps } from '../context.ts';
import { html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import { setCurrentProject, setFlash } from '../../accounts/sessions.ts';
import { disableStatusPage, enableStatusPage, regenerateStatusPage, statusPageSlug } from '../../status-pages/repo.ts';
import { urls } from '../urls.ts';

const projectName = z.string().trim().min(1, 'Give the project a name.').max(255, 'At most 255 characters.');

export function projectSettingsRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  const page = async (
    req: Parameters<typeof sessionOf>[0],
    reply: Parameters<typeof sendHtml>[0],
    errors: Record<string, string[]> = {},
    status = 200,
  ) => {
    const pc = await pageContext(req, deps, 'Project settings', 'project');
    const csrf = pc.session.csrfToken;
    const project = pc.project;
    const slug = project ? await statusPageSlug(ctx.sql, project.id) : null;
    const publicUrl = slug ? `${ctx.config.PUBLIC_URL}${urls.statusPage(slug)}` : '';
    const ownedOrgs = [
      ...new Map(
        pc.workspace.projects
          .filter((p) => p.role === 'owner' || p.organizationId === project?.organizationId)
          .map((p) => [p.organizationId, p.organizationName]),
      ).entries(),
    ];
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Project settings', { sub: project ? html`<strong>${project.name}</strong> in ${project.organizationName}` : '' })}
          ${
            project
              ? html`<div class="card">
                    <div class="card-head"><h2>Name</h2></div>
                    <div class="card-body">
                      <form method="post" action="${urls.project}/rename" class="form">
                        ${csrfInput(csrf)}
                        <div class="form-row">
                          ${field({ name: 'name', label: 'Project name', value: project.name, required: true, errors })}
                          <div class="field"><label>&nbsp;</label><button type="submit" class="btn">Rename</button></div>
                        </div>
                      </form>
                    </div>
                  </div>
                  <div class="card" id="status-page">
                    <div class="card-head">
                      <h2>Public status page</h2>
                      ${
                        slug
                          ? html`<div class="actions">
                              ${postButton({ action: `${urls.project}/status-page/regenerate`, label: 'New address', csrf, small: true, confirm: 'Give the status page a new address? The current one stops working.' })}
                              ${postButton({ action: `${urls.project}/status-page/disable`, label: 'Turn off', csrf, kind: 'danger', small: true, confirm: 'Turn the public status page off?' })}
                            </div>`
                          : ''
                      }
                    </div>
                    <div class="card-body">
                      <p class="muted">
                        A read-only page with the current status of this project's monitors and heartbeats, 90 days of uptime and open
                        incidents. It is public to anyone with its secret address; URLs, settings and errors are never shown.
                      </p>
                      ${
                        slug
                          ? html`${copyRow(publicUrl, 'Copy', 'status-page-url')}<a
                                class="btn"
                                href="${urls.statusPage(slug)}"
                                target="_blank"
                                rel="noopener"
                                data-testid="open-status-page"
                                >Open status page</a
                              >`
                          : postButton({ action: `${urls.project}/status-page`, label: 'Turn on the status page', csrf, kind: 'primary' })
                      }
                    </div>
                  </div>`
              : ''
          }
          <div class="card">
            <div class="card-head"><h2>New project</h2></div>
            <div class="card-body">
              <form method="post" action="${urls.project}/new" class="form">
                ${csrfInput(csrf)}
                <div class="form-row">
                  ${field({ name: 'new_name', label: 'Name', required: true, placeholder: 'Staging', errors })}
                  ${
                    ownedOrgs.length > 1
                      ? html`<div class="field">
                          <label for="f-organization_id">Organization</label
                          ><select id="f-organization_id" name="organization_id">
                            ${ownedOrgs.map(
                              ([id, name]) =>
                                html`<option value="${id}" ${id === project?.organizationId ? html` selected` : ''}>${name}</option>`,
                            )}
                          </select>
                        </div>`
                      : html`<input type="hidden" name="organization_id" value="${ownedOrgs[0]?.[0] ?? ''}" />`
                  }
                </div>
                <div><button type="submit" class="btn btn-primary">Create project</button></div>
              </form>
            </div>
          </div>`,
      ),
      status,
    );
  };

  app.get(urls.project, async (req, reply) => page(req, reply));

  const current = async (req: Parameters<typeof sessionOf>[0]) => {
    const pc = await pageContext(req, deps, 'Project settings', 'project');
    if (!pc.project) throw new AppError('NOT_FOUND');
    return pc;
  };

  app.post(`${urls.project}/rename`, async (req, reply) => {
    const pc = await current(req);
    const parsed = projectName.safeParse(text(formOf(req), 'name'));
    if (!parsed.success) return page(req, reply, { name: [parsed.error.issues[0]!.message] }, 422);
    await updateProject(ctx.sql, pc.project!.id, [...pc.session.principal.organizationIds], { name: parsed.data });
    await setFlash(ctx.sql, pc.session.id, 'Project renamed.');
    return reply.redirect(urls.project, 303);
  });

  app.post(`${urls.project}/new`, async (req, reply) => {
    const session = sessionOf(req);
    const form = formOf(req);
    const parsed = projectName.safeParse(text(form, 'new_name'));
    if (!parsed.success) return page(req, reply, { new_name: [parsed.error.issues[0]!.message] }, 422);
    const organizationId = text(form, 'organization_id');
    if (!session.principal.organizationIds.has(organizationId)) throw new AppError('FORBIDDEN');
    const project = await insertProject(ctx.sql, { organization_id: organizationId, name: parsed.data, description: '' });
    await setCurrentProject(ctx.sql, session.id, project.id);
    await setFlash(ctx.sql, session.id, `Project “${project.name}” created; the dashboard now shows it.`);
    return reply.redirect(urls.home, 303);
  });

  app.post(`${urls.project}/status-page`, async (req, reply) => {
    const pc = await current(req);
    await enableStatusPage(ctx.sql, pc.project!.id);
    await setFlash(ctx.sql, pc.session.id, 'The status page is public at the address below.');
    return reply.redirect(`${urls.project}#status-page`, 303);
  });

  app.post(`${urls.project}/status-page/regenerate`, async (req, reply) => {
    const pc = await current(req);
    await regenerateStatusPage(ctx.sql, pc.project!.id);
    await setFlash(ctx.sql, pc.session.id, 'The status page has a new address; the old one no longer works.');
    return reply.redirect(`${urls.project}#status-page`, 303);
  });

  app.post(`${urls.project}/status-page/disable`, async (req, reply) => {
    const pc = await current(req);
    await disableStatusPage(ctx.sql, pc.project!.id);
    await setFlash(ctx.sql, pc.session.id, 'The status page is off.');
    return reply.redirect(urls.project, 303);
  });
}
