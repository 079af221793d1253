-- The retention job (control-plane/src/db/retention.ts) finds old published events, finished
-- deliveries and trigger calls by age. These tables grow in insertion order, so a BRIN index on
-- the age column finds the old end of the table for a few pages of index, and costs next to
-- nothing per insert (the outbox takes a burst of thousands of events a second).
create index outbox_events_created_brin on outbox_events using brin (created_at);
create index deliveries_created_brin on deliveries using brin (created_at);
create index trigger_events_fired_brin on trigger_events using brin (fired_at);
