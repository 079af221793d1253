import { incidentImpacts } from '../status-pages/overall.ts';
import type { StatusPageComponent } from '../status-pages/schemas.ts';
import { impactWords, incidentStatuses, statusWords } from '../status-pages/incidents/rules.ts';
import { fieldErrors } from './components.ts';
import type { Form } from './context.ts';
import { html, type Html } from './html.ts';

/** Fields the dashboard's incident forms share: what it affects, its impact and status as choices in words. */

export const impactOptions = incidentImpacts.map((i) => [i, i === 'none' ? 'None' : impactWords[i]] as const);
export const statusOptions = incidentStatuses.map((s) => [s, statusWords[s]] as const);

/** `monitor:<id>` and `heartbeat:<id>` values of the components boxes, as the API's refs (the schema judges them). */
export function componentRefs(form: Form): { type: string; id: string }[] {
  const v = form['components'];
  const values = Array.isArray(v) ? v : v ? [v] : [];
  return values.map((s) => {
    const [type, id] = s.split(':');
    return { type: type ?? '', id: id ?? '' };
  });
}

/** The components the page shows as checkboxes, by the names it shows them under. */
export function componentChoices(
  shown: readonly StatusPageComponent[],
  chosen: readonly string[],
  errors?: Record<string, string[]>,
): Html {
  const errs = fieldErrors(errors, 'components');
  return html`<div class="field${errs.length ? ' invalid' : ''}" id="f-components" role="group" aria-labelledby="l-components">
    <label id="l-components">Affected components</label>
    ${
      shown.length === 0
        ? html`<p class="muted">The page shows nothing yet.</p>`
        : html`<div class="actions">
            ${shown.map((c) => {
              const value = `${c.type}:${c.id}`;
              return html`<label class="check"
                ><input type="checkbox" name="components" value="${value}" ${chosen.includes(value) ? html` checked` : ''} />
                ${c.display_name ?? c.name}</label
              >`;
            })}
          </div>`
    }
    ${errs.map((e) => html`<div class="error">${e}</div>`)}
  </div>`;
}
