import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/context.ts';
import { MAX_COMPONENTS, MAX_GROUPS, StatusPageCreateBody, StatusPageUpdateBody, type StatusPage } from '../../status-pages/schemas.ts';
import * as statusPages from '../../status-pages/service.ts';
import { cell, input, rowsOf } from '../check-fields.ts';
import { checkbox, csrfInput, field, formErrorSummary, textareaField } from '../components.ts';
import { idParam, sendHtml, text, type Form, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { formPage, noProject, pageContext, type PageContext } from '../page.ts';
import { projectSubjects, type ProjectSubjects } from '../subject-choices.ts';
import { urls } from '../urls.ts';

/**
 * New and edit pages of a status page, saved through the status-pages service (the API's rules
 * and messages). Groups and their components are repeated rows, as the monitor form's headers:
 * every row is a plain field, so the form works without a script; app.js only folds the empty
 * component rows away behind an "Add a component" button. Rows left empty are ignored.
 */

interface ComponentRow {
  /** The index of the row in the form. */
  row: number;
  /** `monitor:<id>` or `heartbeat:<id>`; '' for none. */
  subject: string;
  displayName: string;
  description: string;
}

interface GroupRow {
  row: number;
  name: string;
  components: ComponentRow[];
}

interface Values {
  title: string;
  description: string;
  autoPublish: boolean;
  customDomain: string;
  /** A new password; empty: keep the one there is (never shown again). */
  password: string;
  removePassword: boolean;
  /** Whether the stored page has a password (for the form's words). */
  passwordProtected: boolean;
  /** Client addresses, one a line. */
  allowlist: string;
  groups: GroupRow[];
}

const componentEmpty = (c: Omit<ComponentRow, 'row'>) => c.subject === '' && c.displayName === '' && c.description === '';
const groupEmpty = (g: Omit<GroupRow, 'row'>) => g.name === '' && g.components.every(componentEmpty);

function valuesOf(page: StatusPage | undefined, projectName: string): Values {
  return {
    title: page?.title ?? projectName,
    description: page?.description ?? '',
    autoPublish: page?.auto_publish_incidents ?? false,
    customDomain: page?.custom_domain ?? '',
    password: '',
    removePassword: false,
    passwordProtected: page?.password_protected ?? false,
    allowlist: (page?.ip_allowlist ?? []).join('\n'),
    groups: (page?.groups ?? []).map((g, i) => ({
      row: i,
      name: g.name,
      components: g.components.map((c, j) => ({
        row: j,
        subject: `${c.type}:${c.id}`,
        displayName: c.display_name ?? '',
        description: c.description,
      })),
    })),
  };
}

function formValues(form: Form, passwordProtected: boolean): Values {
  return {
    title: text(form, 'title'),
    description: text(form, 'description'),
    autoPublish: text(form, 'auto_publish_incidents') === 'on',
    customDomain: text(form, 'custom_domain'),
    // Kept as typed: a password's spaces are part of it.
    password: typeof form['password'] === 'string' ? form['password'] : '',
    removePassword: text(form, 'remove_password') === 'on',
    passwordProtected,
    allowlist: typeof form['ip_allowlist'] === 'string' ? form['ip_allowlist'] : '',
    groups: rowsOf(form, 'groups', 'name', MAX_GROUPS + 1, (at, i) => ({
      row: i,
      name: at('name').trim(),
      components: rowsOf(form, `groups.${i}.components`, 'subject', MAX_COMPONENTS + 1, (c, j) => ({
        row: j,
        subject: c('subject').trim(),
        displayName: c('display_name').trim(),
        description: c('description').trim(),
      })),
    })),
  };
}

/** The rows the body was made of, to put the API's messages (`groups.1.components.0.id`) under the form's rows. */
interface Read {
  body: {
    title: string;
    description: string;
    auto_publish_incidents: boolean;
    custom_domain: string | null;
    password?: string | null;
    ip_allowlist: string[];
    groups: unknown[];
  };
  groups: { row: number; name: string; components: { row: number; subject: string }[] }[];
}

function read(v: Values): Read {
  const groups = v.groups.filter((g) => !groupEmpty(g)).map((g) => ({ ...g, components: g.components.filter((c) => !componentEmpty(c)) }));
  const subject = (s: string) => {
    const [type, id] = s.split(':');
    return { type: type ?? '', id: id ?? '' };
  };
  return {
    body: {
      title: v.title,
      description: v.description,
      auto_publish_incidents: v.autoPublish,
      custom_domain: v.customDomain || null,
      ...(v.removePassword ? { password: null } : v.password ? { password: v.password } : {}),
      ip_allowlist: v.allowlist.split(/[\s,]+/).filter((a) => a !== ''),
      groups: groups.map((g) => ({
        name: g.name,
        components: g.components.map((c) => ({ ...subject(c.subject), display_name: c.displayName || null, description: c.description })),
      })),
    },
    groups,
  };
}

/** The API's field errors under the form's fields, in words for the form where a row was left half empty. */
function formErrors(errors: FieldErrors, r: Read): FieldErrors {
  const out: FieldErrors = {};
  const add = (key: string, messages: readonly string[]) => {
    const list = (out[key] ??= []);
    for (const m of messages) if (!list.includes(m)) list.push(m);
  };
  for (const [key, messages] of Object.entries(errors)) {
    const [head, gi, part, ci, name] = key.split('.');
    if (head === 'ip_allowlist') {
      // One textarea holds the list: each message names the entry it is about.
      const entry = gi === undefined ? undefined : r.body.ip_allowlist[Number(gi)];
      add('ip_allowlist', entry === undefined ? messages : messages.map((m) => `${entry}: ${m}`));
      continue;
    }
    const g = head === 'groups' && gi !== undefined ? r.groups[Number(gi)] : undefined;
    if (!g) {
      add(key, messages);
      continue;
    }
    const c = part === 'components' && ci !== undefined ? g.components[Number(ci)] : undefined;
    if (part === 'name') add(`groups.${g.row}.name`, g.name === '' ? ['Name the group.'] : messages);
    else if (c && (name === 'type' || name === 'id')) {
      add(`groups.${g.row}.components.${c.row}.subject`, c.subject === '' ? ['Choose a monitor or heartbeat.'] : messages);
    } else if (c && name) add(`groups.${g.row}.components.${c.row}.${name}`, messages);
    else add(`groups.${g.row}.components`, messages);
  }
  return out;
}

function subjectSelect(id: string, name: string, chosen: string, subjects: ProjectSubjects, invalid: boolean): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${value === chosen ? html` selected` : ''}>${label}</option>`;
  return html`<select id="${id}" name="${name}" ${invalid ? html` aria-invalid="true"` : ''}>
    <option value="">None</option>
    ${subjects.monitors.length ? html`<optgroup label="Monitors">${subjects.monitors.map((m) => option(`monitor:${m.id}`, m.name))}</optgroup>` : ''}
    ${
      subjects.heartbeats.length
        ? html`<optgroup label="Heartbeats">${subjects.heartbeats.map((h) => option(`heartbeat:${h.id}`, h.name))}</optgroup>`
        : ''
    }
  </select>`;
}

function groupBlock(g: GroupRow | undefined, i: number, subjects: ProjectSubjects, errors: FieldErrors | undefined): Html {
  const components = g?.components ?? [];
  const count = Math.min(MAX_COMPONENTS, Math.max(3, components.findLastIndex((c) => !componentEmpty(c)) + 3));
  const byRow = new Map(components.map((c) => [c.row, c]));
  const prefix = `groups.${i}`;
  const own = (errors?.[`${prefix}.components`] ?? []).concat(errors?.[prefix] ?? []);
  return html`<fieldset class="group-block" data-testid="group-${i}" ${!g || groupEmpty(g) ? html` data-row-empty` : ''}>
    <legend>Group ${i + 1}</legend>
    ${field({ name: `${prefix}.name`, label: 'Group name', value: g?.name ?? '', placeholder: i === 0 ? 'Website' : '', errors })}
    <div class="rows" data-testid="${prefix}.components" data-rows="Add a component">
      <div class="rows-head component-row" aria-hidden="true">
        <span>Monitor or heartbeat</span><span>Shown as</span><span>Description</span>
      </div>
      ${Array.from({ length: count }, (_, j) => {
        const c = byRow.get(j) ?? { row: j, subject: '', displayName: '', description: '' };
        const name = `${prefix}.components.${j}`;
        return html`<div class="component-row" ${componentEmpty(c) ? html` data-row-empty` : ''}>
          ${cell(`${name}.subject`, `Group ${i + 1}, component ${j + 1}`, errors, (id, invalid) =>
            subjectSelect(id, `${name}.subject`, c.subject, subjects, invalid),
          )}
          ${cell(`${name}.display_name`, `Group ${i + 1}, component ${j + 1}: shown as`, errors, (id, invalid) =>
            input({ id, name: `${name}.display_name`, value: c.displayName, placeholder: 'Its own name', invalid }),
          )}
          ${cell(`${name}.description`, `Group ${i + 1}, component ${j + 1}: description`, errors, (id, invalid) =>
            input({ id, name: `${name}.description`, value: c.description, placeholder: 'Optional', invalid }),
          )}
        </div>`;
      })}
    </div>
    ${own.map((m) => html`<div class="error">${m}</div>`)}
  </fieldset>`;
}

function pageForm(
  pc: PageContext,
  o: { action: string; values: Values; errors?: FieldErrors; editing: boolean; subjects: ProjectSubjects },
): Html {
  const v = o.values;
  const e = o.errors;
  const filled = v.groups.filter((g) => !groupEmpty(g));
  // The groups as typed (by their rows), and two empty ones more to add with (the script shows one at a time).
  const last = Math.max(-1, ...filled.map((g) => g.row));
  const groupCount = Math.min(MAX_GROUPS, last + 3);
  const byRow = new Map(v.groups.map((g) => [g.row, g]));
  const hasSubjects = o.subjects.monitors.length + o.subjects.heartbeats.length > 0;
  return html`<form method="post" action="${o.action}" class="form wide" novalidate>
    ${csrfInput(pc.session.csrfToken)}
    ${formErrorSummary(e, ['title', 'description', 'password', 'ip_allowlist', 'custom_domain', 'groups', 'auto_publish_incidents'])}
    ${field({ name: 'title', label: 'Title', value: v.title, required: true, errors: e, autofocus: !o.editing, help: 'The heading of the public page.' })}
    ${textareaField({ name: 'description', label: 'Description (optional)', value: v.description, rows: 2, errors: e, help: 'Shown under the title.' })}
    <fieldset class="stack">
      <legend>Who may see it</legend>
      <p class="help">
        Anyone with its address, unless you give it a password, addresses, or both. Then every address of the page (its feeds, summary and
        badges too) asks for them, and nothing of it is kept by shared caches.
      </p>
      ${field({
        name: 'password',
        label: v.passwordProtected ? 'New password (optional)' : 'Password (optional)',
        type: 'password',
        autocomplete: 'new-password',
        value: '',
        errors: e,
        help: v.passwordProtected
          ? 'The page has a password: leave this empty to keep it. A new one signs every reader out.'
          : 'At least 8 characters. Readers give it once a day, in a form.',
      })}
      ${v.passwordProtected ? checkbox({ name: 'remove_password', label: 'Remove the password', checked: v.removePassword }) : ''}
      ${textareaField({
        name: 'ip_allowlist',
        label: 'Allowed addresses (optional)',
        value: v.allowlist,
        rows: 3,
        errors: e,
        help: 'IP addresses or CIDR ranges (203.0.113.0/24, 2001:db8::/32), one a line, at most 100: any other address is refused. Empty: any address.',
      })}
    </fieldset>
    ${field({ name: 'custom_domain', label: 'Custom domain (optional)', value: v.customDomain, errors: e, placeholder: 'status.example.com', help: 'A host name of your own that shows this page at its root; point it at the reverse proxy in front of this service (docs/status-pages.md).' })}
    <fieldset class="stack">
      <legend>What it shows</legend>
      <p class="help">
        Groups are headings with the monitors and heartbeats under them, in this order; the name shown and a description are optional. A
        page with no groups shows every monitor and heartbeat of the project. Rows left empty are ignored; clear a group's name and rows to
        remove it. Save to get more rows.
      </p>
      ${(e?.['groups'] ?? []).map((m) => html`<div class="error">${m}</div>`)}
      ${hasSubjects ? '' : html`<p class="muted">No monitors or heartbeats in this project yet: the page shows them once there are.</p>`}
      <div class="groups" data-testid="groups" data-rows="Add a group">
        ${Array.from({ length: groupCount }, (_, i) => groupBlock(byRow.get(i), i, o.subjects, e))}
      </div>
    </fieldset>
    ${checkbox({
      name: 'auto_publish_incidents',
      label: 'Publish incidents drafted from outages at once',
      checked: v.autoPublish,
      help: 'When something the page shows goes down, an incident is drafted for it and resolved when it is back. Unchecked, drafts wait in the page’s incidents for you to publish them.',
    })}
    <div class="actions">
      <button type="submit" class="btn btn-primary">${o.editing ? 'Save changes' : 'Create status page'}</button>
      <a class="btn" href="${urls.statusPages}">Cancel</a>
    </div>
  </form>`;
}

type PageOf = (values: Values, errors?: FieldErrors) => Html;

export function statusPageFormRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  async function creating(req: FastifyRequest) {
    const pc = await pageContext(req, deps, 'New status page', 'status-pages');
    if (!pc.project) return { pc, project: null };
    const subjects = await projectSubjects(deps, pc.session.principal, pc.project.id);
    const head = pageHead('New status page', {
      sub: html`In <strong>${pc.project.name}</strong>: public at a random address once created.`,
    });
    const page: PageOf = (values, errors) =>
      formPage(pc, head, pageForm(pc, { action: urls.statusPages, values, errors, editing: false, subjects }));
    return { pc, project: pc.project, page };
  }

  /** What the edit page and its post share: the page (404 unless it is the viewer's) and its form page. */
  async function editing(req: FastifyRequest) {
    const id = idParam(req);
    const pc = await pageContext(req, deps, 'Edit status page', 'status-pages');
    const page = await statusPages.getStatusPage(ctx, pc.session.principal, id);
    const subjects = await projectSubjects(deps, pc.session.principal, page.project_id);
    const action = `${urls.statusPageSettings(id)}/edit`;
    const head = pageHead(html`Edit ${page.title}`, {
      sub: html`Public at <a href="${urls.statusPage(page.slug)}" target="_blank" rel="noopener">${page.url}</a>`,
    });
    const formOf: PageOf = (values, errors) => formPage(pc, head, pageForm(pc, { action, values, errors, editing: true, subjects }));
    return { pc, id, page, formOf };
  }

  const again =
    (page: PageOf, passwordProtected = false) =>
    (form: Form, errors: FieldErrors) => {
      const values = { ...formValues(form, passwordProtected), password: '' };
      return page(values, formErrors(errors, read(formValues(form, passwordProtected))));
    };

  app.get(urls.newStatusPage, async (req, reply) => {
    const c = await creating(req);
    if (!c.project) return sendHtml(reply, noProject(c.pc));
    return sendHtml(reply, c.page(valuesOf(undefined, c.project.name)));
  });

  app.post(urls.statusPages, async (req, reply) => {
    const c = await creating(req);
    if (!c.project) return sendHtml(reply, noProject(c.pc));
    const projectId = c.project.id;
    const show = again(c.page);
    return submitForm(req, reply, deps, {
      schema: StatusPageCreateBody,
      input: (form) => ({ ...read(formValues(form, false)).body, project_id: projectId }),
      show: (form, errors, status) => sendHtml(reply, show(form, errors), status),
      save: (body) => statusPages.createStatusPage(ctx, c.pc.session.principal, body),
      done: (p) => ({ flash: `Status page “${p.title}” created: it is public at its address below.`, to: `${urls.statusPages}#p-${p.id}` }),
    });
  });

  app.get(`${urls.statusPages}/:id/edit`, async (req, reply) => {
    const { pc, page, formOf } = await editing(req);
    return sendHtml(reply, formOf(valuesOf(page, pc.project?.name ?? '')));
  });

  app.post(`${urls.statusPages}/:id/edit`, async (req, reply) => {
    const { pc, id, page, formOf } = await editing(req);
    const show = again(formOf, page.password_protected);
    return submitForm(req, reply, deps, {
      schema: StatusPageUpdateBody,
      input: (form) => read(formValues(form, page.password_protected)).body,
      show: (form, errors, status) => sendHtml(reply, show(form, errors), status),
      save: (body) => statusPages.updateStatusPage(ctx, pc.session.principal, id, body),
      done: (p) => ({ flash: `Status page “${p.title}” saved.`, to: `${urls.statusPages}#p-${p.id}` }),
    });
  });
}
