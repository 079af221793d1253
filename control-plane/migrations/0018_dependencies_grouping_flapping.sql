-- Dependencies between monitors and heartbeats, grouped alerts and flapping (ADR 0030).

-- A child (monitor or heartbeat) depends on a parent (monitor or heartbeat) of the same project:
-- while the parent is down, the child's alerts wait for it. Two nullable columns per side keep real
-- foreign keys, so deleting either end deletes the edge.
create table dependencies (
  project_id uuid not null references projects (id) on delete cascade,
  child_monitor_id uuid references monitors (id) on delete cascade,
  child_heartbeat_id uuid references heartbeats (id) on delete cascade,
  parent_monitor_id uuid references monitors (id) on delete cascade,
  parent_heartbeat_id uuid references heartbeats (id) on delete cascade,
  child_id uuid generated always as (coalesce(child_monitor_id, child_heartbeat_id)) stored,
  parent_id uuid generated always as (coalesce(parent_monitor_id, parent_heartbeat_id)) stored,
  position smallint not null default 0,
  created_at timestamptz not null default now(),
  check (num_nonnulls(child_monitor_id, child_heartbeat_id) = 1),
  check (num_nonnulls(parent_monitor_id, parent_heartbeat_id) = 1),
  check (coalesce(child_monitor_id, child_heartbeat_id) <> coalesce(parent_monitor_id, parent_heartbeat_id)),
  primary key (child_id, parent_id)
);
create index dependencies_parent_idx on dependencies (parent_id);
create index dependencies_project_idx on dependencies (project_id);

-- Held alerts gain the reason they wait: a maintenance window (0017), a parent that is or may be
-- down (dependency), a project's grouping window (group). A dependency row waits for its parent:
-- parent_id and parent_incident_id say whose outage it joined (null while the parent is only
-- being waited for), and its release_at is when it is looked at again by the clock.
alter table held_alerts
  add column reason text not null default 'maintenance' check (reason in ('maintenance', 'dependency', 'group')),
  add column parent_id uuid,
  add column parent_incident_id uuid,
  add column settle_until timestamptz;
create index held_alerts_dependency_idx on held_alerts (subject_id) where reason = 'dependency';
create index held_alerts_parent_incident_idx on held_alerts (parent_incident_id) where parent_incident_id is not null;
create index held_alerts_group_idx on held_alerts (project_id, release_at) where status = 'held' and reason = 'group';

-- Grouping: downs (and ups) of a project's monitors within this many seconds of the first go out
-- as one message per integration. Null: off (each change is sent on its own, as before).
alter table projects add column alert_group_seconds integer check (alert_group_seconds between 5 and 600);

-- Flapping: more than flap_threshold state changes within flap_window_seconds mark the monitor
-- flapping (one message), changes are then not sent until it settles (one message). Null: off.
alter table monitors
  add column flap_threshold integer check (flap_threshold between 2 and 100),
  add column flap_window_seconds integer not null default 600 check (flap_window_seconds between 60 and 86400),
  -- While flapping: when it started, and the instant of the last change seen (settles a window after).
  add column flapping_since timestamptz,
  add column flap_last_change_at timestamptz;
create index monitors_flapping_idx on monitors (flap_last_change_at) where flapping_since is not null;
