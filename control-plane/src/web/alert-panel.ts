import type { Principal } from '../accounts/bearer.ts';
import * as alerts from '../alerts/service.ts';
import type { Alert } from '../alerts/view.ts';
import type { App } from '../platform/http/context.ts';
import { setFlash } from '../accounts/sessions.ts';
import { postButton } from './components.ts';
import { idParam, sessionOf, text, type Form, type WebDeps } from './context.ts';
import { html, type Html } from './html.ts';
import { urls } from './urls.ts';

const when = (iso: string) => html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;

/**
 * What a monitor's or heartbeat's page says of its alerts and snooze (ADR 0032): each open alert
 * with who acknowledged it, its reminders and escalation, and the buttons to acknowledge it or
 * to snooze the monitor or heartbeat.
 */
export function alertPanel(opts: { base: string; csrf: string; open: readonly Alert[]; snoozedUntil: string | null }): Html {
  const { base, csrf, open, snoozedUntil } = opts;
  const unacknowledged = open.some((a) => a.status === 'open');
  return html`<div class="card" id="alerts" data-testid="alert-panel">
    <div class="card-head">
      <h2>Alerts</h2>
      <div class="actions">
        ${unacknowledged ? postButton({ action: `${base}/acknowledge`, label: 'Acknowledge', csrf, kind: 'primary', small: true }) : ''}
        ${
          snoozedUntil
            ? postButton({ action: `${base}/snooze`, label: 'End snooze', csrf, small: true, fields: { minutes: '0' } })
            : postButton({ action: `${base}/snooze`, label: 'Snooze 1 h', csrf, small: true, fields: { minutes: '60' } })
        }
      </div>
    </div>
    <div class="card-body">
      ${snoozedUntil ? html`<p class="notice" data-testid="snoozed">Snoozed until ${when(snoozedUntil)}: its alerts wait until then.</p>` : ''}
      ${
        open.length === 0
          ? html`<p class="muted">No open alert.</p>`
          : open.map(
              (a) =>
                html`<p data-testid="open-alert">
                  <span class="pill ${a.status === 'open' ? 'down' : 'late'}">${a.status === 'open' ? 'Open' : 'Acknowledged'}</span>
                  since ${when(a.opened_at)} ${a.acknowledged_by ? html` · acknowledged by ${a.acknowledged_by}` : ''}
                  ${a.renotified > 0 ? html` · ${a.renotified} reminder${a.renotified === 1 ? '' : 's'}` : ''}
                  ${a.escalated_at ? html` · escalated ${when(a.escalated_at)}` : ''}
                </p>`,
            )
      }
    </div>
  </div>`;
}

/** The panel's buttons: acknowledge the subject's open alerts, snooze it (minutes 0: end the snooze). */
export function alertPanelRoutes(app: App, deps: WebDeps): void {
  for (const type of ['monitor', 'heartbeat'] as const) {
    const base = (id: string) => (type === 'monitor' ? urls.monitor(id) : urls.heartbeat(id));
    const principalOf = (req: Parameters<typeof sessionOf>[0]): Principal => sessionOf(req).principal;
    app.post(`/app/${type}s/:id/acknowledge`, async (req, reply) => {
      const id = idParam(req);
      const p = principalOf(req);
      const open = await alerts.openAlertsOfSubject(deps.ctx, p, { type, id });
      for (const a of open.filter((x) => x.status === 'open'))
        await alerts.acknowledgeAlert(deps.ctx, [...p.projectIds], a.id, { userId: p.userId, via: 'dashboard' });
      await setFlash(
        deps.ctx.sql,
        sessionOf(req).id,
        open.length > 0 ? 'Acknowledged: no more reminders or escalation.' : 'No open alert.',
      );
      return reply.redirect(`${base(id)}#alerts`, 303);
    });
    app.post(`/app/${type}s/:id/snooze`, async (req, reply) => {
      const id = idParam(req);
      const p = principalOf(req);
      const raw = text((req.body ?? {}) as Form, 'minutes');
      const minutes = /^\d{1,5}$/.test(raw) ? Number(raw) : 60;
      const s = await alerts.snoozeSubject(deps.ctx, { type, id }, [...p.projectIds], minutes === 0 ? null : minutes, {
        userId: p.userId,
        via: 'dashboard',
      });
      await setFlash(
        deps.ctx.sql,
        sessionOf(req).id,
        s.snoozed_until ? `Snoozed until ${s.snoozed_until.slice(0, 16).replace('T', ' ')} UTC.` : 'No longer snoozed.',
      );
      return reply.redirect(`${base(id)}#alerts`, 303);
    });
  }
}
