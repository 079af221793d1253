import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RouteInfo } from '../../control-plane/src/platform/http/route-table.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { publicRoutes, routeKey } from './routes.ts';

/**
 * The isolation matrices and the fuzzers are generated from the route table by auth kind. This
 * file makes sure that every route of the application lands in one of them: a route behind a
 * token or a session is covered by construction, a public one must be listed in `routes.ts`, and
 * a route whose kind contradicts its address (a dashboard page left public, a REST route outside
 * the token scope) fails here.
 */
const expectedKind = (url: string): RouteInfo['auth'] => {
  if (url === '/mcp') return 'mcp';
  if (url === '/' || url.startsWith('/app/')) return 'session';
  return 'bearer';
};

describe('route coverage', () => {
  let cp: TestControlPlane;
  let table: RouteInfo[];
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'] });
    table = cp.cp.app!.routeTable;
  });
  after(() => cp.stop());

  it('gives every route a matrix expectation: an auth kind, or an entry among the public routes', () => {
    const listedPublic = new Set(Object.entries(publicRoutes).flatMap(([url, r]) => r.methods.map((method) => routeKey({ method, url }))));
    const problems: string[] = [];
    for (const r of table) {
      const key = routeKey(r);
      if (listedPublic.has(key)) {
        if (r.auth !== 'public') problems.push(`${key} is listed as public but authenticates by ${r.auth}`);
        continue;
      }
      if (r.auth === 'public') problems.push(`${key} is public but not listed in test/security/routes.ts (or its scope forgot to mark it)`);
      else if (r.auth !== expectedKind(r.url)) problems.push(`${key} authenticates by ${r.auth}, its address says ${expectedKind(r.url)}`);
    }
    const present = new Set(table.map(routeKey));
    for (const key of listedPublic) if (!present.has(key)) problems.push(`${key} is listed as public but no longer exists`);
    assert.deepEqual(problems, []);
  });

  it('has routes of every kind, so a broken marker cannot empty a matrix unnoticed', () => {
    const count = (auth: RouteInfo['auth']) => table.filter((r) => r.auth === auth).length;
    assert.ok(count('bearer') >= 30, `bearer: ${count('bearer')}`);
    assert.ok(count('session') >= 50, `session: ${count('session')}`);
    assert.deepEqual(
      table
        .filter((r) => r.auth === 'mcp')
        .map(routeKey)
        .sort(),
      ['POST /mcp'],
    );
  });
});
