-- The delivery path runs on Postgres (ADR 0023). Alert events waiting for their deliveries
-- (notified_at null) are claimed from outbox_events by the notify role's router, and deliveries
-- are claimed from their table by its workers, each with FOR UPDATE SKIP LOCKED: the tables are
-- the queues, so no message between them can be lost and no relay has to look for one. These
-- triggers only wake the notify processes (LISTEN) when there is work; they poll as well.
create function wake_alert_router() returns trigger language plpgsql as $$
begin
  if exists (select 1 from recorded where notified_at is null) then
    perform pg_notify('alerts_recorded', '');
  end if;
  return null;
end $$;

create trigger outbox_events_alerts after insert on outbox_events
  referencing new table as recorded
  for each statement execute function wake_alert_router();

create function wake_delivery_workers() returns trigger language plpgsql as $$
begin
  perform pg_notify('deliveries_due', '');
  return null;
end $$;

create trigger deliveries_created after insert on deliveries
  for each statement execute function wake_delivery_workers();

-- The NOTIFY work queue is gone: no message stands for a delivery any more.
alter table deliveries drop column queued_at;

-- Alerts the old relay no longer looked at (over a day old) are not sent now, days late.
update outbox_events set notified_at = now() where notified_at is null and created_at < now() - interval '1 day';
