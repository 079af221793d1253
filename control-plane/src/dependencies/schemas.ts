import { z } from 'zod';
import { MAX_PARENTS } from './rules.ts';

export const SubjectRefSchema = z
  .strictObject({
    type: z.enum(['monitor', 'heartbeat']),
    id: z.uuid(),
  })
  .describe('A monitor or heartbeat of the same project.');

/** The `depends_on` field of monitors and heartbeats. */
export const dependsOnField = z
  .array(SubjectRefSchema)
  .max(MAX_PARENTS)
  // The same parent twice is one parent.
  .overwrite((list) => [...new Map(list.map((r) => [r.id, r])).values()])
  .describe(
    `Extension: up to ${MAX_PARENTS} monitors or heartbeats of the same project this one depends on (a host, a database, an upstream). While one of them is down, this one's alerts are held and it joins that outage (its checks and history go on); when the parent recovers and this one is still down, it alerts then. A dependency that would make a cycle is refused. Left out on create: none; left out on update: kept.`,
  );
