import type { Principal } from '../accounts/bearer.ts';
import { dependencyChoices, type SubjectRef } from '../dependencies/service.ts';
import { fieldErrors } from './components.ts';
import type { Form, WebDeps } from './context.ts';
import { html, type Html } from './html.ts';
import { urls } from './urls.ts';

export type DependencyChoice = SubjectRef & { name: string };

export function projectDependencyChoices(deps: WebDeps, p: Principal, projectId: string): Promise<DependencyChoice[]> {
  return dependencyChoices(deps.ctx.sql, p, projectId);
}

const key = (r: SubjectRef) => `${r.type}:${r.id}`;

/**
 * A multiple choice of the project's monitors and heartbeats this one depends on (ADR 0030):
 * while one of them is down, this one's alerts wait with that outage. `self` is left out.
 */
export function dependencyField(
  all: readonly DependencyChoice[],
  chosen: readonly SubjectRef[],
  self: string | null,
  errors?: Record<string, string[]>,
): Html {
  const options = all.filter((c) => c.id !== self);
  const picked = new Set(chosen.map(key));
  const errs = fieldErrors(errors, 'depends_on');
  const group = (type: SubjectRef['type'], label: string) => {
    const list = options.filter((o) => o.type === type);
    return list.length === 0
      ? ''
      : html`<optgroup label="${label}">
          ${list.map((o) => html`<option value="${key(o)}" ${picked.has(key(o)) ? html` selected` : ''}>${o.name}</option>`)}
        </optgroup>`;
  };
  return html`<div class="field${errs.length ? ' invalid' : ''}">
    <label for="f-depends_on">Depends on</label>
    <select
      id="f-depends_on"
      name="depends_on"
      multiple
      size="${Math.min(6, Math.max(2, options.length))}"
      ${errs.length ? html` aria-invalid="true"` : ''}
    >
      ${group('monitor', 'Monitors')} ${group('heartbeat', 'Heartbeats')}
    </select>
    <div class="help">
      Up to 10 (a host, a database, an upstream). While one of them is down, this one's alerts wait with that outage; if it is still down
      when the parent is up again, it alerts then.
    </div>
    ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}

/** The dependencies a form sent (a multiple select repeats its name), as API refs. */
export function chosenDependencies(form: Form): SubjectRef[] {
  const v = form.depends_on;
  const list = Array.isArray(v) ? v : v ? [v] : [];
  return list.flatMap((s) => {
    const m = /^(monitor|heartbeat):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(s);
    return m ? [{ type: m[1] as SubjectRef['type'], id: m[2]!.toLowerCase() }] : [];
  });
}

/** The names of a resource's parents, by id (read only when it has some). */
export async function dependencyNames(
  deps: WebDeps,
  p: Principal,
  projectId: string,
  refs: readonly SubjectRef[],
): Promise<ReadonlyMap<string, string>> {
  if (refs.length === 0) return new Map();
  return new Map((await dependencyChoices(deps.ctx.sql, p, projectId)).map((c) => [c.id, c.name]));
}

/** A resource's parents as links to their pages, or "nothing". */
export function dependsOnLinks(refs: readonly SubjectRef[], names: ReadonlyMap<string, string>): Html {
  if (refs.length === 0) return html`nothing`;
  return html`${refs.map(
    (d, i) =>
      html`${i > 0 ? ', ' : ''}<a href="${d.type === 'monitor' ? urls.monitor(d.id) : urls.heartbeat(d.id)}"
          >${names.get(d.id) ?? d.id}</a
        >`,
  )}`;
}
