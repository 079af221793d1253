import { randomUUID } from 'node:crypto';
import type { Sql } from '../../control-plane/src/platform/db/sql.ts';

/**
 * An open alert of this heartbeat, written as the router writes one when it sends the heartbeat's
 * down (for tests about who may reach an alert, not about how alerts open). Its id.
 */
export async function openTestAlert(sql: Sql, projectId: string, heartbeat: { id: string; name: string }): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  const opening = {
    id,
    kind: 'heartbeat.down',
    occurred_at: at,
    project_id: projectId,
    subject: { type: 'heartbeat', id: heartbeat.id, name: heartbeat.name },
    data: { reason: 'missed' },
  };
  await sql`
    insert into alerts (id, project_id, heartbeat_id, opening, opened_at, renotify_anchor)
    values (${id}, ${projectId}, ${heartbeat.id}, ${sql.json(opening)}, ${at}, ${at})`;
  return id;
}
