-- What a project watches: HTTP monitors (with their incidents) and heartbeats, and the
-- integrations their alerts go to.

create table integrations (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  type text not null,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index integrations_project_idx on integrations (project_id);

create table monitors (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  url text not null,
  method text not null default 'GET' check (method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD')),
  valid_http_codes integer[] not null,
  basic_auth_username text,
  -- sealed with AES-256-GCM (shared/src/crypto.ts); never returned by the API
  basic_auth_password_sealed text,
  active boolean not null default true,
  interval_seconds integer not null default 60 check (interval_seconds between 5 and 86400),
  timeout_seconds integer not null default 10 check (timeout_seconds between 1 and 60 and timeout_seconds <= interval_seconds),
  -- null: every region with a live agent
  regions text[],
  follow_redirects boolean not null default true,
  -- 0 pending (no result yet), 1 up, 2 down; paused (3) is derived from active
  status smallint not null default 0 check (status in (0, 1, 2)),
  last_checked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index monitors_project_idx on monitors (project_id, created_at, id);

create table monitor_integrations (
  monitor_id uuid not null references monitors (id) on delete cascade,
  integration_id uuid not null references integrations (id) on delete cascade,
  primary key (monitor_id, integration_id)
);

-- One row per down period of a monitor.
create table incidents (
  id uuid primary key default gen_random_uuid(),
  monitor_id uuid not null references monitors (id) on delete cascade,
  started_at timestamptz not null,
  ended_at timestamptz,
  cause text not null default '',
  regions text[] not null default '{}'
);
create index incidents_monitor_idx on incidents (monitor_id, started_at desc);
create unique index incidents_one_open_key on incidents (monitor_id) where ended_at is null;

create table heartbeats (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  grace_period integer not null check (grace_period between 60 and 86400),
  cron_schedule text,
  timezone text not null default 'UTC',
  period integer check (period between 60 and 31536000),
  next_ping_at timestamptz,
  active boolean not null default true,
  status text not null default 'new' check (status in ('new', 'up', 'late', 'down', 'running', 'paused')),
  last_ping_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index heartbeats_project_idx on heartbeats (project_id, created_at, id);

create table heartbeat_integrations (
  heartbeat_id uuid not null references heartbeats (id) on delete cascade,
  integration_id uuid not null references integrations (id) on delete cascade,
  primary key (heartbeat_id, integration_id)
);
