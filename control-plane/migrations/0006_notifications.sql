-- Notifications: integration settings, inbound triggers with their fire log and rate-limit
-- window, and the delivery outbox (one row per event and integration) that the notify role drains.

-- config: the settings that may be shown; secrets_sealed: the write-only ones (webhook URLs,
-- tokens, keys) as one JSON object sealed with the integration-secrets key.
alter table integrations
  add column config jsonb not null default '{}',
  add column secrets_sealed text;
create index integrations_project_list_idx on integrations (project_id, created_at, id);

create table triggers (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  default_message text not null,
  token_protected boolean not null default false,
  -- SHA-256 of the trigger token; the token itself is shown once
  token_hash bytea,
  token_prefix text,
  rate_limit_max integer check (rate_limit_max >= 1),
  rate_limit_per text check (rate_limit_per in ('second', 'minute', 'hour', 'day')),
  -- fixed-window counter: the window the calls were counted in, and how many
  rate_window_start timestamptz,
  rate_window_count integer not null default 0,
  active boolean not null default true,
  fire_count bigint not null default 0,
  last_fired_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((rate_limit_max is null) = (rate_limit_per is null))
);
create index triggers_project_idx on triggers (project_id, created_at, id);

create table trigger_integrations (
  trigger_id uuid not null references triggers (id) on delete cascade,
  integration_id uuid not null references integrations (id) on delete cascade,
  primary key (trigger_id, integration_id)
);
create index trigger_integrations_integration_idx on trigger_integrations (integration_id);

-- One row per accepted call of a notify URL; its id is the event id of its deliveries.
create table trigger_events (
  id uuid primary key default gen_random_uuid(),
  trigger_id uuid not null references triggers (id) on delete cascade,
  message text not null,
  -- dispatched, paused (trigger inactive) or no_integrations (none active and linked)
  outcome text not null check (outcome in ('dispatched', 'paused', 'no_integrations')),
  integrations integer not null,
  source_address text,
  user_agent text,
  fired_at timestamptz not null default now()
);
create index trigger_events_trigger_idx on trigger_events (trigger_id, fired_at desc, id desc);

-- The delivery outbox. event_id is a DomainEvent id, a trigger event id or a test send's own id.
-- status: pending (waiting for its first or next attempt), sending (claimed by a worker until
-- claimed_until), delivered, dead (permanent failure or out of attempts; last_error says why).
create table deliveries (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null,
  integration_id uuid not null references integrations (id) on delete cascade,
  project_id uuid not null references projects (id) on delete cascade,
  trigger_id uuid references triggers (id) on delete cascade,
  kind text not null,
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'sending', 'delivered', 'dead')),
  attempts integer not null default 0,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  claimed_until timestamptz,
  -- when the NOTIFY message was last published; null: not yet (the relay publishes it)
  queued_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (event_id, integration_id)
);
create index deliveries_integration_idx on deliveries (integration_id, created_at desc, id desc);
create index deliveries_trigger_idx on deliveries (trigger_id) where trigger_id is not null;
create index deliveries_relay_idx on deliveries (next_attempt_at) where status in ('pending', 'sending');
