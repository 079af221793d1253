/**
 * The roles of a control-plane process. One process may run them all (the embedded default) or
 * a subset; every role that consumes a stream does so through a durable consumer, so several
 * processes of one role share the work.
 */
export const allRoles = ['api', 'ingest', 'deadline', 'notify', 'assign'] as const;
export type Role = (typeof allRoles)[number];

export function parseRoles(text: string): Role[] {
  const roles = text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = roles.filter((r) => !(allRoles as readonly string[]).includes(r));
  if (unknown.length > 0) {
    throw new Error(`unknown role${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; roles are ${allRoles.join(', ')}`);
  }
  if (roles.length === 0) throw new Error(`--roles needs at least one of ${allRoles.join(', ')}`);
  return [...new Set(roles)] as Role[];
}
