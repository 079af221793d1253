-- The outbox's publish marks move to a queue of their own (ADR 0043). An event recorded is also
-- queued here, in the same transaction; once EVENTS has stored it, its queue row is deleted. The
-- wide event row is no longer updated when it is published: that update rewrote the row and its
-- five index entries (no HOT update: the column was in a partial index's predicate), and it locked
-- the rows the notify router claims (FOR UPDATE SKIP LOCKED), so a router skipped alerts being
-- marked and found them only on its next look. The queue is narrow and nobody else locks it.
create table outbox_unpublished (
  id uuid primary key,
  created_at timestamptz not null default now()
);
create index outbox_unpublished_created_idx on outbox_unpublished (created_at);

insert into outbox_unpublished (id, created_at)
select id, created_at from outbox_events where published_at is null;

drop index outbox_events_unpublished_idx;
alter table outbox_events drop column published_at;
