import type { Principal } from '../accounts/bearer.ts';
import type { Integration } from '../notifications/integrations/schemas.ts';
import * as integrations from '../notifications/integrations/service.ts';
import type { DeliveryView } from '../notifications/log.ts';
import { checkbox } from './components.ts';
import { typeLabels } from './config-fields.ts';
import type { Form, WebDeps } from './context.ts';
import { html, type Html } from './html.ts';
import { urls } from './urls.ts';

export function deliveryPill(d: Pick<DeliveryView, 'status'>): Html {
  const cls = d.status === 'delivered' ? 'up' : d.status === 'dead' ? 'down' : d.status === 'sending' ? 'running' : 'late';
  return html`<span class="pill ${cls}">${d.status[0]!.toUpperCase() + d.status.slice(1)}</span>`;
}

export async function projectIntegrations(deps: WebDeps, p: Principal, projectId: string): Promise<Integration[]> {
  return (await integrations.listIntegrations(deps.ctx, p, projectId, { page: 1, per_page: 100 })).items;
}

/** Checkboxes linking the project's integrations to a monitor, heartbeat or trigger. */
export function integrationChoices(all: readonly Integration[], chosen: readonly string[], legend = 'Send alerts to'): Html {
  if (all.length === 0)
    return html`<fieldset>
      <legend>${legend}</legend>
      <p class="muted">No integrations in this project yet. <a href="${urls.integrations}/new">Add one</a> to get alerts.</p>
    </fieldset>`;
  return html`<fieldset>
    <legend>${legend}</legend>
    <div class="actions">
      ${all.map((i) =>
        checkbox({
          name: 'integration_ids',
          label: `${i.name} (${typeLabels[i.type]})${i.active ? '' : ' · paused'}`,
          checked: chosen.includes(i.id),
          value: i.id,
        }),
      )}
    </div>
  </fieldset>`;
}

/** The integration ids a form sent (a checkbox list repeats its name). */
export function chosenIntegrations(form: Form): string[] {
  const v = form.integration_ids;
  return (Array.isArray(v) ? v : v ? [v] : []).filter((s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s));
}
