import type { Sql } from '../platform/db/sql.ts';
import { randomToken } from '../accounts/sessions.ts';

export type BadgeSubject = { monitorId: string } | { heartbeatId: string };

const column = (s: BadgeSubject) => ('monitorId' in s ? { monitor_id: s.monitorId } : { heartbeat_id: s.heartbeatId });

/** 128 random bits in base64url: a badge address cannot be guessed from anything. */
const newSlug = () => randomToken().slice(0, 22);

export async function badgeSlug(sql: Sql, s: BadgeSubject): Promise<string | null> {
  const [row] =
    'monitorId' in s
      ? await sql<{ slug: string }[]>`select slug from badges where monitor_id = ${s.monitorId}`
      : await sql<{ slug: string }[]>`select slug from badges where heartbeat_id = ${s.heartbeatId}`;
  return row?.slug ?? null;
}

export async function createBadge(sql: Sql, s: BadgeSubject): Promise<string> {
  const existing = await badgeSlug(sql, s);
  if (existing) return existing;
  const [row] = await sql<
    { slug: string }[]
  >`insert into badges ${sql({ slug: newSlug(), ...column(s) })} on conflict do nothing returning slug`;
  return row?.slug ?? (await badgeSlug(sql, s))!;
}

export async function deleteBadge(sql: Sql, s: BadgeSubject): Promise<void> {
  if ('monitorId' in s) await sql`delete from badges where monitor_id = ${s.monitorId}`;
  else await sql`delete from badges where heartbeat_id = ${s.heartbeatId}`;
}

export async function findBadge(sql: Sql, slug: string): Promise<{ monitor_id: string | null; heartbeat_id: string | null } | undefined> {
  const [row] = await sql<{ monitor_id: string | null; heartbeat_id: string | null }[]>`
    select monitor_id, heartbeat_id from badges where slug = ${slug}`;
  return row;
}
