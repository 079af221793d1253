import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import { csrfInput, field, postButton, timeTag } from '../components.ts';
import { idParam, sendHtml, sessionOf, text, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { dataTable } from '../table.ts';
import { addMember, listMembers, removeMember } from '../../projects/members.ts';
import { noProject, pageContext, render } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { urls } from '../urls.ts';

export function memberRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  const page = async (
    req: Parameters<typeof sessionOf>[0],
    reply: Parameters<typeof sendHtml>[0],
    form?: { email: string; errors: FieldErrors },
    status = 200,
  ) => {
    const pc = await pageContext(req, deps, 'Members', 'members');
    if (!pc.project) return sendHtml(reply, noProject(pc));
    const orgId = pc.project.organizationId;
    const owner = pc.project.role === 'owner';
    const members = await listMembers(ctx.sql, pc.session.principal, orgId);
    const now = ctx.now();
    return sendHtml(
      reply,
      render(
        pc,
        html`${pageHead('Members', { sub: html`People in <strong>${pc.project.organizationName}</strong>. Everyone here can see and change every project of the organization.` })}
          ${
            owner
              ? html`<div class="card">
                  <div class="card-head"><h2>Add a member</h2></div>
                  <div class="card-body">
                    <form method="post" action="${urls.members}" class="form">
                      ${csrfInput(pc.session.csrfToken)}
                      <div class="form-row">
                        ${field({ name: 'email', label: 'Email of an existing account', type: 'email', value: form?.email, required: true, errors: form?.errors })}
                        <div class="field"><label>&nbsp;</label><button type="submit" class="btn btn-primary">Add member</button></div>
                      </div>
                    </form>
                  </div>
                </div>`
              : html`<div class="flash">Only owners of ${pc.project.organizationName} can add or remove members.</div>`
          }
          <div class="card">
            ${dataTable(
              ['Email', 'Role', 'Joined', ''],
              members.map(
                (m) =>
                  html`<tr data-member="${m.email}">
                    <td>
                      <strong>${m.email}</strong
                      >${m.name ? html` <span class="faint">${m.name}</span>` : ''}${m.user_id === pc.session.userId ? html` <span class="tag">you</span>` : ''}
                    </td>
                    <td><span class="tag">${m.role}</span></td>
                    <td class="when">${timeTag(m.joined_at, relativeTime(new Date(m.joined_at), now))}</td>
                    <td class="right">
                      ${
                        owner && m.role === 'member'
                          ? postButton({
                              action: `${urls.members}/${m.user_id}/remove`,
                              label: 'Remove',
                              csrf: pc.session.csrfToken,
                              kind: 'danger',
                              small: true,
                              confirm: `Remove ${m.email} from ${pc.project!.organizationName}?`,
                            })
                          : ''
                      }
                    </td>
                  </tr>`,
              ),
            )}
          </div>`,
      ),
      status,
    );
  };

  app.get(urls.members, async (req, reply) => page(req, reply));

  app.post(urls.members, async (req, reply) => {
    const pc = await pageContext(req, deps, 'Members', 'members');
    if (!pc.project) throw new AppError('FORBIDDEN');
    const { organizationId, organizationName } = pc.project;
    return submitForm(req, reply, deps, {
      // Whether the email is an account's, and not a member's already, is the service's to say.
      schema: z.object({ email: z.string() }),
      input: (form) => ({ email: text(form, 'email') }),
      show: (form, errors, status) => page(req, reply, { email: text(form, 'email'), errors }, status),
      save: ({ email }) => addMember(ctx.sql, pc.session.principal, organizationId, email),
      shown: { VALIDATION: 'email', CONFLICT: 'email' },
      done: (_added, { email }) => ({ flash: `${email} is now a member of ${organizationName}.`, to: urls.members }),
    });
  });

  app.post(`${urls.members}/:userId/remove`, async (req, reply) => {
    const userId = idParam(req, 'userId');
    const pc = await pageContext(req, deps, 'Members', 'members');
    if (!pc.project) throw new AppError('FORBIDDEN');
    await removeMember(ctx.sql, sessionOf(req).principal, pc.project.organizationId, userId);
    await setFlash(ctx.sql, pc.session.id, 'Member removed. Their access ends with their next request.');
    return reply.redirect(urls.members, 303);
  });
}
