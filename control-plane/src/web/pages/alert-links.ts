import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { verifyLink, type LinkPurpose } from '../../alerts/links.ts';
import * as alerts from '../../alerts/service.ts';
import type { Alert } from '../../alerts/view.ts';
import { SNOOZE_CHOICES } from '../../alerts/rules.ts';
import type { App } from '../../platform/http/context.ts';
import { AppError } from '../../platform/errors.ts';
import { formatDuration } from '../components.ts';
import { queryText, sendHtml, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { linkActionPage } from '../layout.ts';

const uuid = z.uuid();

const page = (deps: WebDeps, title: string, body: Html): Html => linkActionPage(deps.assets, title, body);

const notFoundPage = (deps: WebDeps) =>
  page(
    deps,
    'Link not valid',
    html`<h1>This link is not valid</h1>
      <p class="muted">It may have been copied only in part.</p>`,
  );

function summary(a: Alert): Html {
  return html`<h1>${a.subject.type === 'monitor' ? 'Monitor' : 'Heartbeat'} ${a.subject.name}</h1>
    <p>${a.message}</p>
    <p class="muted">Down since <time datetime="${a.opened_at}">${a.opened_at.slice(0, 16).replace('T', ' ')} UTC</time></p>`;
}

function state(a: Alert): Html | null {
  if (a.status === 'resolved') return html`<p class="notice up" data-testid="link-state">Resolved: it is up again.</p>`;
  if (a.status === 'acknowledged')
    return html`<p class="notice" data-testid="link-state">
      Acknowledged by ${a.acknowledged_by ?? 'someone'} at ${a.acknowledged_at!.slice(0, 16).replace('T', ' ')} UTC.
    </p>`;
  return null;
}

/** A browser form posted it (it gets a page back); anything else (curl) gets a line of text. */
const fromForm = (req: FastifyRequest) => (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');

function answerText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').send(`${text}\n`);
}

/**
 * The links messages carry  (ADR 0032): `/app/alerts/<id>/acknowledge?sig=...` and `/app/alerts/<id>/snooze?sig=...`.
 * A GET only shows the alert and the button (mail scanners and chat unfurlers fetch links; they
 * must not acknowledge anything); a POST acts, from that button or from `curl -X POST`. The
 * signature is the credential: no sign-in, one action on one alert.
 */
export function alertLinkRoutes(app: App, deps: WebDeps): void {
  const ctx = deps.ctx;
  const load = async (req: FastifyRequest, purpose: LinkPurpose): Promise<{ id: string; projectId: string } | null> => {
    const id = (req.params as { id: string }).id;
    if (!uuid.safeParse(id).success || !verifyLink(ctx.keys.alertLinks, purpose, id, queryText(req, 'sig'))) return null;
    const projectId = await alerts.projectOfAlert(ctx, id);
    return projectId ? { id, projectId } : null;
  };
  const current = (target: { id: string; projectId: string }): Promise<Alert> => alerts.alertIn(ctx, [target.projectId], target.id);

  app.get('/app/alerts/:id/acknowledge', async (req, reply) => {
    const target = await load(req, 'acknowledge');
    if (!target) return sendHtml(reply, notFoundPage(deps), 404);
    const a = await current(target);
    const done = state(a);
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        `Acknowledge ${a.subject.name}`,
        html`${summary(a)}
        ${
          done ??
          html`<form method="post" action="${req.url}">
            <button class="btn btn-primary" type="submit" autofocus data-testid="acknowledge">Acknowledge</button>
            <p class="muted">Re-notifications and escalation stop; the people who were told hear who took it.</p>
          </form>`
        }`,
      ),
    );
  });

  app.post('/app/alerts/:id/acknowledge', async (req, reply) => {
    const target = await load(req, 'acknowledge');
    if (!target) return sendHtml(reply, notFoundPage(deps), 404);
    let a: Alert;
    try {
      a = await alerts.acknowledgeAlert(ctx, [target.projectId], target.id, { via: 'link' });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'CONFLICT') throw err;
      a = await current(target);
    }
    if (!fromForm(req)) return answerText(reply, 200, a.status === 'resolved' ? 'Resolved already' : 'Acknowledged');
    return sendHtml(reply, page(deps, `Acknowledged ${a.subject.name}`, html`${summary(a)}${state(a)}`));
  });

  app.get('/app/alerts/:id/snooze', async (req, reply) => {
    const target = await load(req, 'snooze');
    if (!target) return sendHtml(reply, notFoundPage(deps), 404);
    const a = await current(target);
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        `Snooze ${a.subject.name}`,
        html`${summary(a)}
        ${
          a.status === 'resolved'
            ? state(a)
            : html`<p>No re-notification or escalation until then; still down at the end, it is sent again.</p>
                <div class="actions">
                  ${SNOOZE_CHOICES.map(
                    (m) =>
                      html`<form method="post" action="${req.url}">
                        <input type="hidden" name="minutes" value="${m}" />
                        <button class="btn" type="submit" data-testid="snooze-${m}">Snooze ${formatDuration(m * 60)}</button>
                      </form>`,
                  )}
                </div>`
        }`,
      ),
    );
  });

  app.post('/app/alerts/:id/snooze', async (req, reply) => {
    const target = await load(req, 'snooze');
    if (!target) return sendHtml(reply, notFoundPage(deps), 404);
    const raw = (req.body as Record<string, unknown> | undefined)?.minutes ?? queryText(req, 'minutes') ?? '60';
    const minutes = typeof raw === 'number' ? raw : /^\d{1,5}$/.test(String(raw)) ? Number(raw) : NaN;
    let a: Alert;
    try {
      a = await alerts.snoozeAlert(ctx, [target.projectId], target.id, minutes, { via: 'link' });
    } catch (err) {
      if (!(err instanceof AppError) || (err.code !== 'CONFLICT' && err.code !== 'VALIDATION')) throw err;
      if (err.code === 'VALIDATION')
        return sendHtml(
          reply,
          page(
            deps,
            'Snooze',
            html`<h1>Snooze</h1>
              <p class="notice">${err.message}</p>`,
          ),
          422,
        );
      a = await current(target);
    }
    if (!fromForm(req)) return answerText(reply, 200, a.status === 'resolved' ? 'Resolved already' : `Snoozed until ${a.snoozed_until}`);
    return sendHtml(
      reply,
      page(
        deps,
        `Snoozed ${a.subject.name}`,
        html`${summary(a)}${
          state(a) ??
          html`<p class="notice" data-testid="link-state">Snoozed until ${(a.snoozed_until ?? '').slice(0, 16).replace('T', ' ')} UTC.</p>`
        }`,
      ),
    );
  });
}
