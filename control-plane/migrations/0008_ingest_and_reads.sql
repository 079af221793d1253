-- Ingest at tens of thousands of results a second, and monitor lists that cost the same with
-- a hundred monitors or a hundred thousand.

-- Raw results and rollups lose their foreign keys: the check fired once per inserted row and was
-- the largest single cost of a batch. The ingest already locks the batch's monitors rows (which
-- waits out a concurrent delete and skips a deleted monitor), and the trigger below removes the
-- history of deleted monitors, as the cascade did.
alter table check_results drop constraint check_results_monitor_id_fkey;
alter table check_rollups drop constraint check_rollups_monitor_id_fkey;

create function delete_monitor_history() returns trigger language plpgsql as $$
begin
  delete from check_results where monitor_id in (select id from gone);
  delete from check_rollups where monitor_id in (select id from gone);
  return null;
end $$;

create trigger monitors_history_deleted
  after delete on monitors referencing old table as gone
  for each statement execute function delete_monitor_history();

-- The last check is kept per region, next to that region's vote, so a batch no longer rewrites
-- the (wide) monitors row of every monitor it touches. A monitor's last check is the newest of
-- its regions' and of monitors.last_checked_at (what was recorded before this migration).
alter table monitor_regions add column checked_at timestamptz;
update monitor_regions r set checked_at = m.last_checked_at from monitors m where m.id = r.monitor_id;
-- Votes and rollups are rewritten by nearly every batch: room on each page for the next version
-- of a row keeps most of those updates HOT (no new index entry, less bloat). New pages only.
alter table monitor_regions set (fillfactor = 50);
alter table check_rollups set (fillfactor = 50);

-- Monitors per project, kept by the triggers below, so a list's `total` is one index lookup.
create table monitor_counts (
  project_id uuid primary key,
  monitors integer not null
);
insert into monitor_counts (project_id, monitors) select project_id, count(*) from monitors group by project_id;

create function count_monitors() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into monitor_counts (project_id, monitors)
    select project_id, count(*) from added group by project_id
    on conflict (project_id) do update set monitors = monitor_counts.monitors + excluded.monitors;
  elsif tg_op = 'DELETE' then
    update monitor_counts c set monitors = c.monitors - g.n
    from (select project_id, count(*) as n from gone group by project_id) g
    where c.project_id = g.project_id;
  else
    -- Only a monitor moved to another project changes a count.
    update monitor_counts c set monitors = c.monitors - g.n
    from (select o.project_id, count(*) as n from gone o join added a on a.id = o.id where a.project_id <> o.project_id group by o.project_id) g
    where c.project_id = g.project_id;
    insert into monitor_counts (project_id, monitors)
    select a.project_id, count(*) from added a join gone o on o.id = a.id where a.project_id <> o.project_id group by a.project_id
    on conflict (project_id) do update set monitors = monitor_counts.monitors + excluded.monitors;
  end if;
  return null;
end $$;

create trigger monitors_counted_insert
  after insert on monitors referencing new table as added
  for each statement execute function count_monitors();
create trigger monitors_counted_delete
  after delete on monitors referencing old table as gone
  for each statement execute function count_monitors();
-- A column list cannot go with transition tables, hence every update; see the function.
create trigger monitors_counted_update
  after update on monitors referencing old table as gone new table as added
  for each statement execute function count_monitors();
