import type { Principal } from '../accounts/bearer.ts';
import { dependencyChoices } from '../dependencies/service.ts';
import { fieldErrors } from './components.ts';
import type { Form, WebDeps } from './context.ts';
import { html, type Html } from './html.ts';

export interface Subject {
  id: string;
  name: string;
}

/** A project's monitors and heartbeats, A to Z by name: what a maintenance window may cover. */
export interface ProjectSubjects {
  monitors: Subject[];
  heartbeats: Subject[];
}

export async function projectSubjects(deps: WebDeps, p: Principal, projectId: string): Promise<ProjectSubjects> {
  // Ids and names in one query, not the monitors' full reads page by page.
  const all = await dependencyChoices(deps.ctx.sql, p, projectId, 100_000);
  const pick = (type: 'monitor' | 'heartbeat') => all.filter((s) => s.type === type).map(({ id, name }) => ({ id, name }));
  return { monitors: pick('monitor'), heartbeats: pick('heartbeat') };
}

/**
 * One list of checkboxes (`monitor_ids` or `heartbeat_ids`) with the messages about it. The
 * group's box carries the field's id, so its messages sit under it like any field's.
 */
export function subjectChoices(o: {
  name: 'monitor_ids' | 'heartbeat_ids';
  label: string;
  all: readonly Subject[];
  chosen: readonly string[];
  none: Html;
  errors?: Record<string, string[]>;
}): Html {
  const errs = fieldErrors(o.errors, o.name);
  return html`<div class="field${errs.length ? ' invalid' : ''}" id="f-${o.name}" role="group" aria-labelledby="l-${o.name}">
    <label id="l-${o.name}">${o.label}</label>
    ${
      o.all.length === 0
        ? html`<p class="muted">${o.none}</p>`
        : html`<div class="actions">
            ${o.all.map(
              (s) =>
                html`<label class="check"
                  ><input type="checkbox" name="${o.name}" value="${s.id}" ${o.chosen.includes(s.id) ? html` checked` : ''} />
                  ${s.name}</label
                >`,
            )}
          </div>`
    }
    ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

/** The ids a form sent for a checkbox list (repeated name), as sent: the schema judges them. */
export function chosenIds(form: Form, name: string): string[] {
  const v = form[name];
  return Array.isArray(v) ? v : v ? [v] : [];
}
