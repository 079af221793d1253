import type { FastifyError } from 'fastify';
import { ZodError } from 'zod';
import { AppError } from '../platform/errors.ts';
import type { App } from '../platform/http/context.ts';
import type { WebDeps } from './context.ts';
import { html, type Html } from './html.ts';
import { publicPage } from './layout.ts';
import { urls } from './urls.ts';

const titles: Record<number, string> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Page not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Too large',
  415: 'Unsupported content',
  422: 'Invalid input',
  429: 'Too many requests',
  500: 'Something went wrong',
};

export function renderError(deps: WebDeps, status: number, message: string): Html {
  const title = titles[status] ?? 'Error';
  return publicPage(
    deps.assets,
    `${title} · uptime`,
    html`<div class="card">
      <div class="card-body">
        <h1>${title}</h1>
        <p class="muted">${message}</p>
        <div class="actions"><a class="btn btn-primary" href="${urls.home}">Go to the dashboard</a></div>
      </div>
    </div>`,
  );
}

const friendly: Record<number, string> = {
  403: 'You do not have access to this.',
  404: 'There is nothing here, or it belongs to a project you are not part of.',
  405: 'This address does not take that kind of request.',
  500: 'The error has been logged. Please try again in a moment.',
};

/** Dashboard errors are pages, not JSON: the same statuses as the API, with words for people. */
export function installWebErrorHandler(app: App, deps: WebDeps): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, req, reply) => {
    let status = 500;
    let message = friendly[500]!;
    if (err instanceof AppError) {
      status = err.status;
      if (err.headers) void reply.headers(err.headers);
      message = friendly[status] ?? err.message;
    } else if (err instanceof ZodError) {
      status = 422;
      message = err.issues[0]?.message ?? 'The input was not valid.';
    } else {
      const code = (err as FastifyError).statusCode;
      if (code && code >= 400 && code < 500) {
        status = code;
        message = friendly[code] ?? err.message;
      }
    }
    if (status >= 500) req.log.error({ err }, 'dashboard request failed');
    return reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .send(renderError(deps, status, message).value);
  });
}
