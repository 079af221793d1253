-- Monitor tags, and the status changes of one heartbeat read by its page.

-- Labels a team sorts its monitors by ("prod", "eu", "checkout"): at most 10 per monitor, each
-- 1-32 characters (monitors/schemas.ts). A constant default adds the column without rewriting
-- the table. The GIN index answers `?tag=` (tags @> array[...]) across a project's monitors.
alter table monitors add column tags text[] not null default '{}';
create index monitors_tags_idx on monitors using gin (tags);

-- A heartbeat's page shows its down, up and late transitions next to its pings. They are the
-- outbox's events of that heartbeat: this partial index holds those kinds only (not the
-- monitors', triggers' or started events), by heartbeat and time, so the page reads a few
-- index entries however large the outbox is.
create index outbox_events_heartbeat_changes_idx on outbox_events ((payload #>> '{subject,id}'), created_at desc)
  where kind in ('heartbeat.down', 'heartbeat.up', 'heartbeat.late');
