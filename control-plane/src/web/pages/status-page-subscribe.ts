import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createRateLimiter } from '../../../../shared/src/rate-limit.ts';
import type { App } from '../../platform/http/context.ts';
import { verifySubscriber, type SubscriberPurpose } from '../../status-pages/subscribers/links.ts';
import * as subscribers from '../../status-pages/subscribers/service.ts';
import { sendHtml, type WebDeps } from '../context.ts';
import { html, type Html } from '../html.ts';
import { linkActionPage } from '../layout.ts';
import { urls } from '../urls.ts';
import { pageAccessAt } from '../../status-pages/service.ts';
import type { StatusPageAccess } from './status-page-access.ts';

const uuid = z.uuid();
const SLUG = /^[A-Za-z0-9_-]{22}$/;

/** The subscribe form a public page shows at its foot (when email can be sent). */
export function subscribeForm(slug: string): Html {
  return html`<section class="card subscribe" aria-labelledby="subscribe-title" data-testid="subscribe">
    <div class="card-body">
      <h2 id="subscribe-title">Get updates by email</h2>
      <form method="post" action="${urls.statusSubscribe(slug)}" class="subscribe-form">
        <label for="subscribe-email">Email address</label>
        <div class="subscribe-row">
          <input id="subscribe-email" name="email" type="email" autocomplete="email" required maxlength="254" />
          <button class="btn btn-primary" type="submit">Subscribe</button>
        </div>
        <p class="muted">You will get an email to confirm first. Every message has a link to unsubscribe.</p>
      </form>
    </div>
  </section>`;
}

const page = (deps: WebDeps, title: string, body: Html): Html =>
  linkActionPage(deps.assets, title, body, html`<meta name="robots" content="noindex" />`);

const notValid = (deps: WebDeps) =>
  page(
    deps,
    'Link not valid',
    html`<h1>This link is not valid</h1>
      <p class="muted">It may have been copied only in part, or the subscription has ended.</p>`,
  );

/** A mail client's one-click unsubscribe (RFC 8058) or a browser's form: anything else posted gets a line of text. */
const fromForm = (req: FastifyRequest) => (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');

function answerText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').send(`${text}\n`);
}

/**
 * What visitors and subscribers of a status page do (docs/status-pages.md, "Subscribers"):
 * - POST /status/<slug>/subscribe (the form at the page's foot): an email address is sent a
 *   confirmation; the answer is the same whatever the address's state. Limited per client address;
 *   a private page's form answers only those who may read the page.
 * - /status/subscriptions/<id>/confirm?sig=... and /unsubscribe?sig=...: a GET shows the one
 *   button (mail scanners fetch links), a POST acts. The unsubscribe link takes RFC 8058's
 *   one-click POST (List-Unsubscribe-Post) with no cookie and no page.
 */
export function statusPageSubscribeRoutes(app: App, deps: WebDeps, access: StatusPageAccess): void {
  const ctx = deps.ctx;
  // Per client address: a burst of 5, then one every 5 minutes.
  const limiter = createRateLimiter({ perMinute: 0.2, burst: 5 });

  app.post('/status/:slug/subscribe', async (req, reply) => {
    const slug = (req.params as { slug: string }).slug;
    const back = html`<p><a href="${urls.statusPage(slug)}">Back to the status page</a></p>`;
    if (!SLUG.test(slug)) return sendHtml(reply, page(deps, 'Not found', html`<h1>There is no status page at this address.</h1>`), 404);
    // A private page's form is for those who may read it.
    const gate = await pageAccessAt(ctx, slug);
    if (!gate) return sendHtml(reply, page(deps, 'Not found', html`<h1>There is no status page at this address.</h1>`), 404);
    if ((await access.check(req, reply, slug, gate.access, 'html')) === 'refused') return reply;
    const raw = (req.body as Record<string, unknown> | undefined)?.email;
    const email = typeof raw === 'string' ? raw : '';
    const wait = limiter.take(req.ip, ctx.now().getTime());
    if (wait > 0) {
      void reply.header('retry-after', String(wait));
      return sendHtml(
        reply,
        page(
          deps,
          'Too many requests',
          html`<h1>Too many requests</h1>
            <p>Try again in ${Math.ceil(wait / 60)} minutes.</p>
            ${back}`,
        ),
        429,
      );
    }
    const outcome = await subscribers.subscribeByEmail(ctx, slug, email);
    if (outcome === 'no-page')
      return sendHtml(reply, page(deps, 'Not found', html`<h1>There is no status page at this address.</h1>`), 404);
    if (outcome === 'closed')
      return sendHtml(
        reply,
        page(
          deps,
          'Not available',
          html`<h1>This page does not send email updates.</h1>
            ${back}`,
        ),
        404,
      );
    if (outcome === 'invalid')
      return sendHtml(
        reply,
        page(
          deps,
          'Not an email address',
          html`<h1>That is not an email address</h1>
            <p class="field-error" role="alert">The email field must be one email address.</p>
            ${back}`,
        ),
        422,
      );
    if (outcome === 'full')
      return sendHtml(
        reply,
        page(
          deps,
          'Not available',
          html`<h1>This page takes no more subscribers.</h1>
            ${back}`,
        ),
        409,
      );
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        'Check your inbox',
        html`<h1>Check your inbox</h1>
          <p data-testid="subscribe-sent">If this address is not subscribed yet, an email is on its way to it with a link to confirm.</p>
          ${back}`,
      ),
    );
  });

  const load = async (req: FastifyRequest, purpose: SubscriberPurpose) => {
    const id = (req.params as { id: string }).id;
    const sig = (req.query as Record<string, unknown>).sig;
    if (!uuid.safeParse(id).success || !verifySubscriber(ctx.keys.subscriberLinks, purpose, id, sig)) return undefined;
    return subscribers.subscriberPage(ctx, id);
  };

  app.get('/status/subscriptions/:id/confirm', async (req, reply) => {
    const s = await load(req, 'confirm');
    if (!s) return sendHtml(reply, notValid(deps), 404);
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        `Confirm · ${s.title}`,
        s.subscriber.confirmed_at
          ? html`<h1>You are subscribed to ${s.title}</h1>
              <p><a href="${urls.statusPage(s.slug)}">The status page</a></p>`
          : html`<h1>Subscribe to ${s.title}</h1>
              <p>Incident updates and maintenance notices will be sent to ${s.subscriber.email ?? 'you'}.</p>
              <form method="post" action="${req.url}">
                <button class="btn btn-primary" type="submit" autofocus data-testid="confirm">Confirm the subscription</button>
              </form>`,
      ),
    );
  });

  app.post('/status/subscriptions/:id/confirm', async (req, reply) => {
    const s = await load(req, 'confirm');
    if (!s || !(await subscribers.confirmSubscription(ctx, s.subscriber.id))) return sendHtml(reply, notValid(deps), 404);
    if (!fromForm(req)) return answerText(reply, 200, 'Subscribed');
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        `Subscribed · ${s.title}`,
        html`<h1 data-testid="confirmed">You are subscribed to ${s.title}</h1>
          <p>Every message has a link to unsubscribe.</p>
          <p><a href="${urls.statusPage(s.slug)}">The status page</a></p>`,
      ),
    );
  });

  app.get('/status/subscriptions/:id/unsubscribe', async (req, reply) => {
    const s = await load(req, 'unsubscribe');
    if (!s) return sendHtml(reply, notValid(deps), 404);
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        `Unsubscribe · ${s.title}`,
        html`<h1>Unsubscribe from ${s.title}</h1>
          <p>No more incident updates or maintenance notices will be sent to ${s.subscriber.email ?? 'this subscriber'}.</p>
          <form method="post" action="${req.url}">
            <button class="btn btn-primary" type="submit" autofocus data-testid="unsubscribe">Unsubscribe</button>
          </form>`,
      ),
    );
  });

  // A subscription already ended answers as done: a second click, or the mail client's one-click
  // after the button, is not an error to show anyone.
  app.post('/status/subscriptions/:id/unsubscribe', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const sig = (req.query as Record<string, unknown>).sig;
    if (!uuid.safeParse(id).success || !verifySubscriber(ctx.keys.subscriberLinks, 'unsubscribe', id, sig))
      return sendHtml(reply, notValid(deps), 404);
    const s = await subscribers.subscriberPage(ctx, id);
    await subscribers.unsubscribe(ctx, id);
    if (!fromForm(req)) return answerText(reply, 200, 'Unsubscribed');
    return sendHtml(
      reply.header('cache-control', 'no-store'),
      page(
        deps,
        'Unsubscribed',
        html`<h1 data-testid="unsubscribed">You are unsubscribed${s ? html` from ${s.title}` : ''}</h1>
          <p>Nothing more will be sent to you from this page.</p>`,
      ),
    );
  });
}
