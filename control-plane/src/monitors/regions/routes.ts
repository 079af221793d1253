import { z } from 'zod';
import type { ApiContext, App } from '../../platform/http/context.ts';
import { authErrors } from '../../platform/http/envelopes.ts';
import { RegionView } from './schemas.ts';
import { listRegions } from './service.ts';

export function regionRoutes(app: App, ctx: ApiContext): void {
  app.get(
    '/regions',
    {
      schema: {
        tags: ['Regions'],
        summary: 'List the probe regions, with their health',
        response: { 200: z.object({ data: z.array(RegionView) }), ...authErrors },
      },
    },
    async () => ({ data: await listRegions(ctx) }),
  );
}
