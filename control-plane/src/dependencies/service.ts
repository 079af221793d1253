import { requireProject, type Principal } from '../accounts/bearer.ts';
import type { Db } from '../platform/db/sql.ts';
import { AppError } from '../platform/errors.ts';
import { parentsOf, projectEdges, projectSubjects, replaceParents, unknownRefs } from './repo.ts';
import { cycleThrough, type SubjectRef } from './rules.ts';

export type { SubjectRef };
export { parentsOf };

/**
 * Refuses parents that are not a monitor or heartbeat of the project, the child itself, or one
 * that would close a cycle, naming the position: `depends_on.<i>`.
 */
async function checkDependsOn(db: Db, projectId: string, child: SubjectRef, refs: readonly SubjectRef[]) {
  if (refs.length === 0) return;
  const fail = (i: number, message: string): never => {
    throw new AppError('VALIDATION', message, { [`depends_on.${i}`]: [message] });
  };
  const unknown = await unknownRefs(db, projectId, refs);
  refs.forEach((r, i) => {
    if (unknown.has(r.id)) fail(i, `The selected depends_on.${i} is not a ${r.type} of this project.`);
    if (r.id === child.id) fail(i, `The depends_on.${i} field names this ${child.type} itself.`);
  });
  const edges = await projectEdges(db, projectId);
  edges.delete(child.id);
  const closing = cycleThrough(
    edges,
    child.id,
    refs.map((r) => r.id),
  );
  if (closing !== null) {
    fail(
      refs.findIndex((r) => r.id === closing),
      `The depends_on.${refs.findIndex((r) => r.id === closing)} field would make a cycle: that ${refs.find((r) => r.id === closing)!.type} already depends on this one.`,
    );
  }
}

/**
 * The parents of a monitor or heartbeat, checked and replaced by `refs` in the caller's
 * transaction; left as they are when undefined. The project's dependency writes are serialized
 * (a transaction lock), so two concurrent edits cannot close a cycle between them.
 */
export async function linkDependencies(tx: Db, projectId: string, child: SubjectRef, refs: readonly SubjectRef[] | undefined) {
  if (refs === undefined) return;
  await tx`select pg_advisory_xact_lock(hashtext('dependencies'), hashtext(${projectId}))`;
  await checkDependsOn(tx, projectId, child, refs);
  await replaceParents(tx, projectId, child, refs);
}

/** The project's monitors and heartbeats by name (ids and names only), for the dashboard's pickers: up to `limit` of each. */
export async function dependencyChoices(db: Db, p: Principal, projectId: string, limit = 500) {
  requireProject(p, projectId);
  return projectSubjects(db, projectId, limit);
}
