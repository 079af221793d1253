import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SampleEvent } from '../../notifications/integrations/schemas.ts';
import * as integrations from '../../notifications/integrations/service.ts';
import { MessageTemplate } from '../../notifications/templates.ts';
import { readOnly, type ToolContext } from '../context.ts';
import { run } from '../result.ts';

export function integrationTools(server: McpServer, t: ToolContext): void {
  const { ctx, principal, channels } = t;

  server.registerTool(
    'preview_integration',
    {
      title: 'Preview the messages of an integration',
      description:
        'The exact request(s) an integration would send for a sample monitor outage (with sample acknowledge, snooze and view links), ' +
        'or for its test message: method, URL and headers with secrets redacted, and the body. Nothing is sent or saved. ' +
        'Give a template ({ title?, body? } with {{variable}} tags, docs/messages.md) to see it before saving it; null shows the standard wording.',
      inputSchema: z.object({
        id: z.uuid().describe('The integration id.'),
        template: MessageTemplate.nullable().optional(),
        event: SampleEvent.default('monitor.down'),
      }),
      annotations: readOnly,
    },
    async ({ id, template, event }) =>
      run(() => integrations.previewIntegration(ctx, principal, id, { event, ...(template !== undefined ? { template } : {}) }, channels)),
  );
}
