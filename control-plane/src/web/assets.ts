import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { App } from '../platform/http/context.ts';
import { urls } from './urls.ts';

interface Asset {
  body: Buffer;
  type: string;
}

const types: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** The dashboard's own files, read once; their content hash versions the URLs so they can be cached for good. */
export function loadAssets(): { version: string; href: (name: keyof typeof types & string) => string; files: Map<string, Asset> } {
  const files = new Map<string, Asset>();
  const digest = createHash('sha256');
  for (const [name, type] of Object.entries(types)) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    digest.update(body);
    files.set(name, { body, type });
  }
  const version = digest.digest('hex').slice(0, 12);
  return { version, files, href: (name) => urls.asset(name, version) };
}

export function assetRoutes(app: App, files: Map<string, Asset>): void {
  app.get('/assets/:name', { schema: { hide: true } }, async (req, reply) => {
    const asset = files.get((req.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    return reply
      .header('content-type', asset.type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  });
}
