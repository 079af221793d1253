-- Which alert events have had their deliveries made (notify/events.ts). The EVENTS consumer sets
-- it in the transaction that inserts the deliveries; the notify role's event relay makes the
-- deliveries of an alert event still without it some minutes after it was published (a message
-- a consumer skipped). Events that notify nobody (heartbeat.started, heartbeat.late,
-- trigger.fired) are written with it set, so the partial index holds only alerts in flight.
alter table outbox_events add column notified_at timestamptz;
update outbox_events set notified_at = coalesce(published_at, created_at);
create index outbox_events_unnotified_idx on outbox_events (created_at) where notified_at is null;
