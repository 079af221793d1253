-- The ping log of each heartbeat, written by the deadline actors in the transaction that applies
-- the ping (so a redelivered ping, same id, is recognised and changes nothing), and the change
-- feed that tells the deadline role and the KV `heartbeats` projection about API changes.

create table heartbeat_pings (
  id bigint generated always as identity primary key,
  heartbeat_id uuid not null references heartbeats (id) on delete cascade,
  -- the ping's id, also its Nats-Msg-Id: one row per ping however often it is delivered
  ping_id uuid not null unique,
  kind text not null check (kind in ('success', 'start', 'fail')),
  exit_code smallint check (exit_code between 0 and 255),
  received_at timestamptz not null,
  -- null: received by the control plane's own endpoint
  region text,
  source text not null,
  method text not null check (method in ('GET', 'POST', 'HEAD')),
  user_agent text,
  -- the first 10 KB of the request body; body_size is the whole body's
  body text not null default '',
  body_size integer not null default 0
);
create index heartbeat_pings_log_idx on heartbeat_pings (heartbeat_id, received_at desc, id desc);

-- Inserts, deletes and API updates (which bump updated_at); the deadline actors' own writes
-- leave updated_at alone, so they do not wake themselves up.
create function notify_heartbeat_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('heartbeat_changes', coalesce(new.id, old.id)::text);
  return null;
end $$;

create trigger heartbeats_added_or_removed
  after insert or delete on heartbeats for each row execute function notify_heartbeat_change();
create trigger heartbeats_updated
  after update on heartbeats for each row
  when (old.updated_at is distinct from new.updated_at)
  execute function notify_heartbeat_change();
