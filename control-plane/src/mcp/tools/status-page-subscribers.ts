import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import { SubscriberCreateBody, SubscriberListQuery, subscriberKinds } from '../../status-pages/subscribers/schemas.ts';
import * as subscribers from '../../status-pages/subscribers/service.ts';
import { creates, overwrites, readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';
import { Paging } from './monitors.ts';

const pageId = z.uuid().describe('The status page id.');
const subscriberId = z.uuid().describe('The subscriber id.');

/** The tool's flat arguments as the API's body: the same checks, the same field names in errors. */
function bodyOf(args: { type: string; email?: string | undefined; url?: string | undefined; secret?: string | undefined }) {
  const { type, email, url, secret } = args;
  const parsed = SubscriberCreateBody.safeParse(
    type === 'email' ? { type, email } : { type, url, ...(secret !== undefined ? { secret } : {}) },
  );
  if (parsed.success) return parsed.data;
  const errors: Record<string, string[]> = {};
  for (const issue of parsed.error.issues) (errors[issue.path.join('.') || 'type'] ??= []).push(issue.message);
  throw new AppError('VALIDATION', 'The given data was invalid.', errors);
}

export function statusPageSubscriberTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal } = t;

  server.registerTool(
    'list_status_page_subscribers',
    {
      title: 'List the subscribers of a status page',
      description:
        'The subscribers of a status page, oldest first: email addresses (confirmed or waiting for their confirmation) and webhooks (their host only), with messages delivered and failed. Filters: type (email, webhook), confirmed.',
      inputSchema: SubscriberListQuery.extend(Paging).extend({ status_page_id: pageId }),
      annotations: readOnly,
    },
    async (args) =>
      run(async () => {
        const { items, total } = await subscribers.listSubscribers(ctx, principal, args.status_page_id, args, args);
        return { data: items, meta: { current_page: args.page, per_page: args.per_page, total } };
      }),
  );

  server.registerTool(
    'get_status_page_subscriber',
    {
      title: 'Get a subscriber of a status page',
      description:
        'One subscriber of a status page (as GET /status-pages/{id}/subscribers/{subscriber_id}): its email address or webhook host, whether it is confirmed, and the messages delivered and failed.',
      inputSchema: z.object({ status_page_id: pageId, subscriber_id: subscriberId }),
      annotations: readOnly,
    },
    async ({ status_page_id, subscriber_id }) => run(() => subscribers.getSubscriber(ctx, principal, status_page_id, subscriber_id)),
  );

  server.registerTool(
    'add_status_page_subscriber',
    {
      title: 'Add a subscriber to a status page',
      description:
        'Adds a subscriber (as POST /status-pages/{id}/subscribers). type email: the address is sent a confirmation email and gets nothing else until its owner confirms. type webhook: url (and an optional signing secret of 16+ characters), active at once; each published incident update and maintenance start or end is POSTed to it as JSON.',
      inputSchema: z.object({
        status_page_id: pageId,
        type: z.enum(subscriberKinds),
        email: z.string().optional().describe('For type email.'),
        url: z.string().optional().describe('For type webhook.'),
        secret: z.string().optional().describe('For type webhook: signs each request (X-Uptime-Signature).'),
      }),
      annotations: creates,
    },
    async ({ status_page_id, ...args }) => run(async () => subscribers.addSubscriber(ctx, principal, status_page_id, bodyOf(args))),
  );

  server.registerTool(
    'remove_status_page_subscriber',
    {
      title: 'Remove a subscriber from a status page',
      description: 'Removes a subscriber: nothing more is sent to it, messages waiting for it included.',
      inputSchema: z.object({ status_page_id: pageId, subscriber_id: subscriberId }),
      annotations: overwrites,
    },
    async ({ status_page_id, subscriber_id }) =>
      run(async () => {
        await subscribers.removeSubscriber(ctx, principal, status_page_id, subscriber_id);
        return { message: 'Subscriber removed successfully' };
      }),
  );
}
