import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { ProjectUpdateBody } from '../../projects/schemas.ts';
import { createProject, getProject, updateProject } from '../../projects/service.ts';
import { checkbox, csrfInput, field } from '../components.ts';
import { typeLabels } from '../config-fields.ts';
import { projectIntegrations } from '../integration-choices.ts';
import { sendHtml, sessionOf, text, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render } from '../page.ts';
import { setCurrentProject } from '../../accounts/sessions.ts';
import { projectStatusPages } from '../../status-pages/service.ts';
import { urls } from '../urls.ts';

const projectName = z.string().trim().min(1, 'Give the project a name.').max(255, 'At most 255 characters.');
const Rename = z.object({ name: projectName });
const NewProject = z.object({ new_name: projectName, organization_id: z.string() });
const Alerting = ProjectUpdateBody.pick({ alert_group_seconds: true }).required();
const Response = ProjectUpdateBody.pick({
  renotify_minutes: true,
  escalate_after_minutes: true,
  escalation_integration_ids: true,
}).required();

/** A whole number of minutes from a form, null when empty (the setting off); anything else is left for the schema to refuse. */
const minutesOf = (v: string) => (v === '' ? null : /^\d+$/.test(v) ? Number(v) : v);

export function projectSettingsRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  const page = async (
    req: Parameters<typeof sessionOf>[0],
    reply: Parameters<typeof sendHtml>[0],
    errors: FieldErrors = {},
    status = 200,
    formValues: Record<string, string | string[] | undefined> = {},
  ) => {
    const pc = await pageContext(req, deps, 'Project settings', 'project');
    const csrf = pc.session.csrfToken;
    const project = pc.project;
    const pages = project ? await projectStatusPages(ctx, pc.session.principal, project.id) : [];
    const settings = project ? await getProject(ctx.sql, pc.session.principal, project.id) : null;
    const groupSeconds = settings?.alert_group_seconds ?? null;
    const integrationsOf = project ? await projectIntegrations(deps, pc.session.principal, project.id) : [];
    const minutesValue = (name: 'renotify_minutes' | 'escalate_after_minutes') =>
      errors[name] ? text(formValues, name) : settings?.[name] === null || settings?.[name] === undefined ? '' : String(settings[name]);
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
                  <div class="card" id="alerting">
                    <div class="card-head"><h2>Alert grouping</h2></div>
                    <div class="card-body">
                      <p class="muted">
                        When many monitors go down at once (a host, a network), send one message listing them instead of one each. A
                        monitor's alert then waits up to this window for others; PagerDuty still gets each on its own.
                      </p>
                      <form method="post" action="${urls.project}/alerting" class="form">
                        ${csrfInput(csrf)}
                        <div class="form-row">
                          ${field({ name: 'alert_group_seconds', label: 'Grouping window (seconds)', type: 'number', value: errors.alert_group_seconds ? text(formValues, 'alert_group_seconds') : groupSeconds === null ? '' : String(groupSeconds), min: 5, max: 600, placeholder: 'Off', errors, help: 'Empty: every alert is sent at once, on its own. 30 is usual.' })}
                          <div class="field"><label>&nbsp;</label><button type="submit" class="btn">Save</button></div>
                        </div>
                      </form>
                    </div>
                  </div>
                  <div class="card" id="response">
                    <div class="card-head"><h2>Alert response</h2></div>
                    <div class="card-body">
                      <p class="muted">
                        While an alert is open and no one has acknowledged it (from the dashboard, the API, or the link in its message),
                        remind the people who got it, and after a while tell a second line. Acknowledging or snoozing it stops both.
                      </p>
                      <form method="post" action="${urls.project}/response" class="form">
                        ${csrfInput(csrf)}
                        <div class="form-row">
                          ${field({ name: 'renotify_minutes', label: 'Remind every (minutes)', type: 'number', value: minutesValue('renotify_minutes'), min: 1, max: 10080, placeholder: 'Off', errors, help: 'Empty: no reminders.' })}
                          ${field({ name: 'escalate_after_minutes', label: 'Escalate after (minutes)', type: 'number', value: minutesValue('escalate_after_minutes'), min: 1, max: 10080, placeholder: 'Off', errors, help: 'Empty: no escalation.' })}
                        </div>
                        <fieldset>
                          <legend>Escalate to</legend>
                          ${
                            integrationsOf.length === 0
                              ? html`<p class="muted">No integrations in this project yet.</p>`
                              : html`<div class="actions">
                                  ${integrationsOf.map((i) =>
                                    checkbox({
                                      name: 'escalation_integration_ids',
                                      label: `${i.name} (${typeLabels[i.type]})`,
                                      checked: settings?.escalation_integration_ids.includes(i.id) ?? false,
                                      value: i.id,
                                    }),
                                  )}
                                </div>`
                          }
                          <p class="muted">These hear of escalations only (and every step after one), not of every alert.</p>
                        </fieldset>
                        <div><button type="submit" class="btn">Save</button></div>
                      </form>
                    </div>
                  </div>
                  <div class="card" id="status-page">
                    <div class="card-head">
                      <h2>Public status pages</h2>
                      <div class="actions"><a class="btn btn-sm" href="${urls.statusPages}">Manage status pages</a></div>
                    </div>
                    <div class="card-body">
                      <p class="muted">
                        Read-only pages with the current status of this project's monitors and heartbeats, 90 days of uptime and open
                        incidents, each public to anyone with its secret address. URLs, settings and errors are never shown.
                      </p>
                      ${
                        pages.length
                          ? html`<ul class="plain-list">
                              ${pages.map(
                                (sp) =>
                                  html`<li>
                                    <a href="${urls.statusPage(sp.slug)}" target="_blank" rel="noopener" data-testid="open-status-page"
                                      >${sp.title}</a
                                    >
                                  </li>`,
                              )}
                            </ul>`
                          : html`<a class="btn btn-primary" href="${urls.newStatusPage}">Create a status page</a>`
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
    return submitForm(req, reply, deps, {
      schema: Rename,
      input: (form) => ({ name: text(form, 'name') }),
      show: (_form, errors, status) => page(req, reply, errors, status),
      save: ({ name }) => updateProject(ctx.sql, pc.session.principal, pc.project!.id, { name }),
      done: () => ({ flash: 'Project renamed.', to: urls.project }),
    });
  });

  app.post(`${urls.project}/alerting`, async (req, reply) => {
    const pc = await current(req);
    return submitForm(req, reply, deps, {
      schema: Alerting,
      input: (form) => {
        const v = text(form, 'alert_group_seconds');
        return { alert_group_seconds: v === '' ? null : /^\d+$/.test(v) ? Number(v) : v };
      },
      show: (form, errors, status) => page(req, reply, errors, status, form),
      save: ({ alert_group_seconds }) => updateProject(ctx.sql, pc.session.principal, pc.project!.id, { alert_group_seconds }),
      done: (project) => ({
        flash:
          project.alert_group_seconds === null
            ? 'Alert grouping is off: every alert is sent on its own.'
            : `Monitor alerts within ${project.alert_group_seconds} seconds of each other are sent as one message.`,
        to: `${urls.project}#alerting`,
      }),
    });
  });

  app.post(`${urls.project}/response`, async (req, reply) => {
    const pc = await current(req);
    return submitForm(req, reply, deps, {
      schema: Response,
      input: (form) => {
        const ids = form.escalation_integration_ids;
        return {
          renotify_minutes: minutesOf(text(form, 'renotify_minutes')),
          escalate_after_minutes: minutesOf(text(form, 'escalate_after_minutes')),
          escalation_integration_ids: Array.isArray(ids) ? ids : ids ? [ids] : [],
        };
      },
      show: (form, errors, status) => page(req, reply, errors, status, form),
      save: (body) => updateProject(ctx.sql, pc.session.principal, pc.project!.id, body),
      done: (project) => ({
        flash: [
          project.renotify_minutes === null
            ? 'No reminders.'
            : `Open alerts are re-sent every ${project.renotify_minutes} minutes until acknowledged.`,
          project.escalate_after_minutes === null || project.escalation_integration_ids.length === 0
            ? 'No escalation.'
            : `Unacknowledged after ${project.escalate_after_minutes} minutes, they escalate.`,
        ].join(' '),
        to: `${urls.project}#response`,
      }),
    });
  });

  app.post(`${urls.project}/new`, async (req, reply) => {
    const session = sessionOf(req);
    return submitForm(req, reply, deps, {
      schema: NewProject,
      input: (form) => ({ new_name: text(form, 'new_name'), organization_id: text(form, 'organization_id') }),
      show: (_form, errors, status) => page(req, reply, errors, status),
      save: (body) =>
        createProject(ctx.sql, session.principal, { organization_id: body.organization_id, name: body.new_name, description: '' }),
      done: async (project) => {
        await setCurrentProject(ctx.sql, session.id, project.id);
        return { flash: `Project “${project.name}” created; the dashboard now shows it.`, to: urls.home };
      },
    });
  });
}
