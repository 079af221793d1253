import { requireProject, type Principal } from '../accounts/bearer.ts';
import type { Sql } from '../platform/db/sql.ts';
import * as repo from './repo.ts';

/** A project's public status page: turned on, given a new address or turned off by the project's members. */

/** The page's address, or null while it is off. */
export async function statusPageSlug(sql: Sql, p: Principal, projectId: string): Promise<string | null> {
  requireProject(p, projectId);
  return repo.statusPageSlug(sql, projectId);
}

/** Turns the page on (a no-op when it is on); its address. */
export async function enableStatusPage(sql: Sql, p: Principal, projectId: string): Promise<string> {
  requireProject(p, projectId);
  return repo.enableStatusPage(sql, projectId);
}

/** A new address; the old one stops working. */
export async function regenerateStatusPage(sql: Sql, p: Principal, projectId: string): Promise<void> {
  requireProject(p, projectId);
  await repo.regenerateStatusPage(sql, projectId);
}

export async function disableStatusPage(sql: Sql, p: Principal, projectId: string): Promise<void> {
  requireProject(p, projectId);
  await repo.disableStatusPage(sql, projectId);
}

/** The project a status page address shows: public, the address is the secret. */
export async function findStatusPage(sql: Sql, slug: string): Promise<{ project_id: string; name: string } | undefined> {
  return repo.findStatusPage(sql, slug);
}
