-- What a status page shows of its incidents changes its snapshot too (ADR 0039): an incident
-- (published, edited, resolved, its postmortem), an update, the components it affects.

create trigger status_page_incidents_changed
  after insert or update or delete on status_page_incidents for each row execute function notify_status_page_page();

create function notify_status_page_incident() returns trigger language plpgsql as $$
begin
  perform pg_notify('status_page_changes', 'page:' || i.status_page_id::text)
  from status_page_incidents i where i.id = coalesce(new.incident_id, old.incident_id);
  return null;
end $$;

create trigger status_page_incident_updates_changed
  after insert or update or delete on status_page_incident_updates for each row execute function notify_status_page_incident();
create trigger status_page_incident_components_changed
  after insert or update or delete on status_page_incident_components for each row execute function notify_status_page_incident();
