-- The monitor pipeline's storage: raw check results (kept RESULTS_RETENTION_DAYS), hourly
-- rollups (kept for charts over long ranges), each region's latest result (the votes of the
-- status rule), and the outbox of domain events published on EVENTS.

create table check_results (
  monitor_id uuid not null references monitors (id) on delete cascade,
  scheduled_at timestamptz not null,
  region text not null,
  checked_at timestamptz not null,
  agent_id text not null,
  ok boolean not null,
  status_code smallint,
  dns_ms real not null,
  connect_ms real not null,
  tls_ms real not null,
  ttfb_ms real not null,
  total_ms real not null,
  error_class text,
  error_message text,
  attempts smallint not null,
  -- one row per slot and region: a redelivered result is a no-op
  primary key (monitor_id, scheduled_at, region)
);
create index check_results_scheduled_idx on check_results (scheduled_at);

create table check_rollups (
  monitor_id uuid not null references monitors (id) on delete cascade,
  region text not null,
  hour timestamptz not null,
  checks integer not null,
  failures integer not null,
  total_ms_sum double precision not null,
  total_ms_max real not null,
  primary key (monitor_id, hour, region)
);

create table monitor_regions (
  monitor_id uuid not null references monitors (id) on delete cascade,
  region text not null,
  ok boolean not null,
  scheduled_at timestamptz not null,
  error text,
  primary key (monitor_id, region)
);

create table outbox_events (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null,
  kind text not null,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_events_unpublished_idx on outbox_events (created_at) where published_at is null;

-- The assigner learns of every change to what agents need (from any writer) at once.
create function notify_monitor_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('monitor_changes', coalesce(new.id, old.id)::text);
  return null;
end $$;

create trigger monitors_changed
  after insert or delete or update of project_id, name, url, method, valid_http_codes, basic_auth_username,
    basic_auth_password_sealed, active, interval_seconds, timeout_seconds, regions, follow_redirects
  on monitors for each row execute function notify_monitor_change();
