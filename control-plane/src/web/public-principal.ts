import type { Principal } from '../accounts/bearer.ts';

/**
 * Public views (status pages, badges) read through the same services as everything else, as a
 * principal that sees exactly one project and belongs to no organization.
 */
export function projectPrincipal(projectId: string): Principal {
  return {
    userId: 'public',
    tokenId: 'public',
    organizationIds: new Set(),
    ownedOrganizationIds: new Set(),
    projectIds: new Set([projectId]),
  };
}
