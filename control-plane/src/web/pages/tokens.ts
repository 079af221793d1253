import { z } from 'zod';
import { createToken, listTokens, revokeMcpToken, revokeToken, type CreatedToken, type TokenRow } from '../../accounts/service.ts';
import type { App } from '../../platform/http/context.ts';
import { relativeTime } from '../../platform/http/time.ts';
import { copyRow, csrfInput, field, postButton, snippet, timeTag } from '../components.ts';
import { idParam, sendHtml, sessionOf, text, type WebDeps } from '../context.ts';
import { submitForm, type FieldErrors } from '../form.ts';
import { html, type Html } from '../html.ts';
import { pageHead } from '../layout.ts';
import { pageContext, render, type PageContext } from '../page.ts';
import { setFlash } from '../../accounts/sessions.ts';
import { dataTable } from '../table.ts';
import { urls } from '../urls.ts';

const MCP_TOKEN_NAME = 'mcp';

interface View {
  created?: CreatedToken;
  name?: string;
  errors?: FieldErrors;
}

const NewToken = z.object({
  name: z
    .string()
    .min(1, { message: 'Give the token a name, such as where it is used.', abort: true })
    .max(100, { message: 'At most 100 characters.', abort: true })
    .refine((name) => !name.includes('\u0000'), 'Not a valid name.'),
});

function shownOnce(t: CreatedToken, what: string): Html {
  return html`<div class="secret" role="status" data-testid="new-token">
    <strong>Your new ${what}. Copy it now: it is shown only once.</strong>
    ${copyRow(t.token, 'Copy', 'token-value')}
    <span class="muted">Only a hash is stored. If you lose it, create a new one and revoke this one.</span>
  </div>`;
}

function tokenTable(pc: PageContext, tokens: readonly TokenRow[], now: Date): Html {
  return dataTable(
    ['Name', 'Token', 'Created', 'Last used', ''],
    tokens.map(
      (t) =>
        html`<tr data-token="${t.name}">
          <td><strong>${t.name}</strong></td>
          <td><code>${t.token_prefix}…</code></td>
          <td class="when">${timeTag(t.created_at, relativeTime(new Date(t.created_at), now))}</td>
          <td class="when">${timeTag(t.last_used_at, t.last_used_at ? relativeTime(new Date(t.last_used_at), now) : 'never')}</td>
          <td class="right">
            ${postButton({ action: `${urls.tokens}/${t.id}/revoke`, label: 'Revoke', csrf: pc.session.csrfToken, kind: 'danger', small: true, confirm: `Revoke “${t.name}”? Requests with it fail from now on.` })}
          </td>
        </tr>`,
    ),
    { empty: 'No API tokens yet.' },
  );
}

function mcpCard(pc: PageContext, deps: WebDeps, token: TokenRow | undefined, created: CreatedToken | undefined, now: Date): Html {
  const csrf = pc.session.csrfToken;
  const endpoint = `${deps.ctx.config.PUBLIC_URL}/mcp`;
  const config = JSON.stringify(
    {
      mcpServers: { uptime: { type: 'http', url: endpoint, headers: { Authorization: `Bearer ${created?.token ?? '<your MCP token>'}` } } },
    },
    null,
    2,
  );
  return html`<div class="card" id="mcp">
    <div class="card-head">
      <h2>MCP token</h2>
      <div class="actions">
        ${
          token
            ? html`${postButton({ action: `${urls.tokens}/mcp`, label: 'Rotate', csrf, small: true, confirm: 'Rotate the MCP token? The current one stops working at once.' })}
              ${postButton({ action: `${urls.tokens}/mcp/revoke`, label: 'Revoke', csrf, kind: 'danger', small: true, confirm: 'Revoke the MCP token? Assistants using it lose access.' })}`
            : postButton({ action: `${urls.tokens}/mcp`, label: 'Create MCP token', csrf, kind: 'primary', small: true })
        }
      </div>
    </div>
    <div class="card-body">
      <p class="muted">
        Lets an AI assistant read and manage your monitors and heartbeats through the MCP endpoint. It opens only <code>/mcp</code>, never
        the REST API, and you have at most one: creating a new one replaces it.
      </p>
      ${created ? shownOnce(created, 'MCP token') : ''}
      ${
        token
          ? html`<dl class="facts">
              <dt>Token</dt>
              <dd><code>${token.token_prefix}…</code></dd>
              <dt>Created</dt>
              <dd>${timeTag(token.created_at, relativeTime(new Date(token.created_at), now))}</dd>
              <dt>Last used</dt>
              <dd>${timeTag(token.last_used_at, token.last_used_at ? relativeTime(new Date(token.last_used_at), now) : 'never')}</dd>
            </dl>`
          : html`<p>No MCP token yet.</p>`
      }
      <h3>Endpoint</h3>
      ${copyRow(endpoint)}
      <h3>Client configuration</h3>
      ${snippet(config, 'mcp-config')}
    </div>
  </div>`;
}

async function tokensPage(req: Parameters<typeof sessionOf>[0], deps: WebDeps, view: View = {}, mcpCreated?: CreatedToken): Promise<Html> {
  const pc = await pageContext(req, deps, 'API tokens', 'tokens');
  const { sql } = deps.ctx;
  const now = deps.ctx.now();
  const [tokens, [mcp]] = await Promise.all([listTokens(sql, pc.session.userId, 'api'), listTokens(sql, pc.session.userId, 'mcp')]);
  return render(
    pc,
    html`${pageHead('API tokens', { sub: 'Tokens act as you, with your organizations and projects. Send one as Authorization: Bearer <token>.' })}
      <div class="card">
        <div class="card-head">
          <h2>API tokens</h2>
          <a href="/docs" class="btn btn-sm">API reference</a>
        </div>
        <div class="card-body">
          ${view.created ? shownOnce(view.created, 'API token') : ''}
          <form method="post" action="${urls.tokens}" class="form">
            ${csrfInput(pc.session.csrfToken)}
            <div class="form-row">
              ${field({ name: 'name', label: 'New token name', value: view.name ?? '', placeholder: 'CI pipeline', required: true, errors: view.errors })}
              <div class="field"><label>&nbsp;</label><button type="submit" class="btn btn-primary">Create token</button></div>
            </div>
          </form>
        </div>
        ${tokenTable(pc, tokens, now)}
      </div>
      ${mcpCard(pc, deps, mcp, mcpCreated, now)}`,
  );
}

export function tokenRoutes(app: App, deps: WebDeps): void {
  const { ctx } = deps;

  app.get(urls.tokens, async (req, reply) => sendHtml(reply, await tokensPage(req, deps)));

  app.post(urls.tokens, async (req, reply) => {
    const session = sessionOf(req);
    return submitForm(req, reply, deps, {
      schema: NewToken,
      input: (form) => ({ name: text(form, 'name') }),
      show: async (form, errors, status) => sendHtml(reply, await tokensPage(req, deps, { name: text(form, 'name'), errors }), status),
      save: ({ name }) => createToken(ctx.sql, session.userId, name, 'api'),
      shown: { CONFLICT: 'name' },
      done: async (created) => {
        req.log.info({ userId: session.userId, tokenId: created.id }, 'API token created');
        // Rendered, not redirected: the token exists only in this response.
        return sendHtml(reply.header('cache-control', 'no-store'), await tokensPage(req, deps, { created }), 201);
      },
    });
  });

  app.post(`${urls.tokens}/:id/revoke`, async (req, reply) => {
    const id = idParam(req);
    const session = sessionOf(req);
    const name = await revokeToken(ctx.sql, session.userId, id, 'api');
    req.log.info({ userId: session.userId, tokenId: id }, 'API token revoked');
    await setFlash(ctx.sql, session.id, `Token “${name}” revoked. Requests with it now get 401.`);
    return reply.redirect(urls.tokens, 303);
  });

  app.post(`${urls.tokens}/mcp`, async (req, reply) => {
    const session = sessionOf(req);
    const created = await createToken(ctx.sql, session.userId, MCP_TOKEN_NAME, 'mcp');
    req.log.info({ userId: session.userId, tokenId: created.id }, 'MCP token created');
    return sendHtml(reply.header('cache-control', 'no-store'), await tokensPage(req, deps, {}, created), 201);
  });

  app.post(`${urls.tokens}/mcp/revoke`, async (req, reply) => {
    const session = sessionOf(req);
    const revoked = await revokeMcpToken(ctx.sql, session.userId);
    await setFlash(ctx.sql, session.id, revoked ? 'MCP token revoked.' : 'There was no MCP token to revoke.');
    return reply.redirect(urls.tokens, 303);
  });
}
