import type { Db } from '../../platform/db/sql.ts';
import { AppError } from '../../platform/errors.ts';
import { foreignIntegrations, replaceLinks, type LinkOwner } from './links-repo.ts';

export type { LinkOwner };

/**
 * Refuses integration ids that are not the project's (another tenant's, or none at all), naming
 * each bad position: `integration_ids.<i>`, as the API's validation errors do.
 */
export async function checkIntegrationIds(db: Db, projectId: string, ids: readonly string[] | undefined): Promise<void> {
  if (!ids || ids.length === 0) return;
  const foreign = new Set(await foreignIntegrations(db, projectId, ids));
  if (foreign.size === 0) return;
  const errors: Record<string, string[]> = {};
  ids.forEach((id, i) => {
    if (foreign.has(id)) errors[`integration_ids.${i}`] = [`The selected integration_ids.${i} is invalid.`];
  });
  throw new AppError('VALIDATION', Object.values(errors)[0]![0], errors);
}

/**
 * The integrations a monitor, heartbeat or trigger notifies, replaced by `ids`; left as they are
 * when `ids` is undefined (an update that does not name them). Run it in the owner's transaction.
 */
export async function linkIntegrations(db: Db, owner: LinkOwner, ids: readonly string[] | undefined): Promise<void> {
  if (ids === undefined) return;
  await replaceLinks(db, owner, ids);
}
