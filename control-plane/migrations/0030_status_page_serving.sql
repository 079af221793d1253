-- Public status pages are served from a snapshot per page (ADR 0039), dropped when something a
-- page shows changes. Every writer (API, check results, deadline actors, a hand-made UPDATE)
-- announces it here; the payload names the project ('project:<id>') or the page ('page:<id>').
-- A notification is a hint: a snapshot also expires after its maximum age.

create function notify_status_page_project() returns trigger language plpgsql as $$
begin
  perform pg_notify('status_page_changes', 'project:' || coalesce(new.project_id, old.project_id)::text);
  return null;
end $$;

create function notify_status_page_page() returns trigger language plpgsql as $$
begin
  perform pg_notify('status_page_changes', 'page:' || coalesce(new.status_page_id, old.status_page_id)::text);
  return null;
end $$;

create trigger monitors_shown_changed
  after update on monitors for each row
  when (old.status is distinct from new.status
    or old.degraded_regions is distinct from new.degraded_regions
    or old.name is distinct from new.name
    or old.active is distinct from new.active)
  execute function notify_status_page_project();
create trigger monitors_shown_added_or_removed
  after insert or delete on monitors for each row execute function notify_status_page_project();

create trigger heartbeats_shown_changed
  after update on heartbeats for each row
  when (old.status is distinct from new.status or old.name is distinct from new.name)
  execute function notify_status_page_project();
create trigger heartbeats_shown_added_or_removed
  after insert or delete on heartbeats for each row execute function notify_status_page_project();

create trigger maintenance_windows_shown_changed
  after insert or update or delete on maintenance_windows for each row execute function notify_status_page_project();

create trigger status_pages_changed
  after insert or update or delete on status_pages for each row execute function notify_status_page_project();
create trigger status_page_groups_changed
  after insert or update or delete on status_page_groups for each row execute function notify_status_page_page();
create trigger status_page_components_changed
  after insert or update or delete on status_page_components for each row execute function notify_status_page_page();

-- A page can also answer at a host name of its own (a reverse proxy in front terminates TLS).
alter table status_pages add column custom_domain text
  check (custom_domain is null or (char_length(custom_domain) <= 253 and custom_domain = lower(custom_domain)));
create unique index status_pages_custom_domain_key on status_pages (custom_domain) where custom_domain is not null;
