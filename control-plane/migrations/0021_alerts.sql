-- Alerts (ADR 0032): one outage of a monitor or heartbeat as people respond to it. Opened in the
-- transaction that makes the deliveries of its down (so it exists before any message names it),
-- resolved with its up. Acknowledging or snoozing it, and the re-notifications and escalation the
-- project's policy asks for, are steps recorded on the row in the transaction of their event.
create table alerts (
  -- the id of the down event that opened it
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  monitor_id uuid references monitors (id) on delete cascade,
  heartbeat_id uuid references heartbeats (id) on delete cascade,
  subject_id uuid generated always as (coalesce(monitor_id, heartbeat_id)) stored,
  -- the monitor's incident (monitors only)
  incident_id uuid,
  -- the down event, as its first message told it
  opening jsonb not null,
  opened_at timestamptz not null,
  acknowledged_at timestamptz,
  acknowledged_by text,
  snoozed_until timestamptz,
  snoozed_by text,
  resolved_at timestamptz,
  -- re-notifications sent, and the scheduled time of the last one (opened_at before the first)
  renotified integer not null default 0,
  renotify_anchor timestamptz not null,
  escalated_at timestamptz,
  -- when the escalation rules look at it next; null: nothing is left to do
  next_step_at timestamptz,
  created_at timestamptz not null default now(),
  check (num_nonnulls(monitor_id, heartbeat_id) = 1)
);
create index alerts_project_idx on alerts (project_id, opened_at desc);
create index alerts_open_subject_idx on alerts (subject_id) where resolved_at is null;
create index alerts_due_idx on alerts (next_step_at) where next_step_at is not null;

-- The project's response policy: re-notify every N minutes while an alert is open and not
-- acknowledged; escalate to other integrations after M minutes unacknowledged.
alter table projects
  add column renotify_minutes integer check (renotify_minutes between 1 and 10080),
  add column escalate_after_minutes integer check (escalate_after_minutes between 1 and 10080);

create table escalation_integrations (
  project_id uuid not null references projects (id) on delete cascade,
  integration_id uuid not null references integrations (id) on delete cascade,
  primary key (project_id, integration_id)
);
create index escalation_integrations_integration_idx on escalation_integrations (integration_id);

-- A snoozed monitor or heartbeat: its downs are held (like a maintenance window) until then.
alter table monitors add column snoozed_until timestamptz;
alter table heartbeats add column snoozed_until timestamptz;

alter table held_alerts drop constraint if exists held_alerts_reason_check;
alter table held_alerts add constraint held_alerts_reason_check check (reason in ('maintenance', 'dependency', 'group', 'snooze'));

-- Integrations that keep failing (ADR 0032): consecutive failed attempts since the last success,
-- when the run of failures began, and when the project was told (once a run).
alter table integrations
  add column failures integer not null default 0,
  add column failing_since timestamptz,
  add column failing_alerted_at timestamptz,
  add column last_failure text;
