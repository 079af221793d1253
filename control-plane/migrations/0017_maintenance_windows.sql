-- Maintenance windows (ADR 0029): while one covers a monitor or heartbeat, its checks run and are
-- stored, its alerts are held instead of sent, and the time is left out of its uptime.

-- A window of a project: one-off (starts_at, ends_at) or recurring (cron + duration_seconds, read
-- in timezone). It covers the monitors and heartbeats it names, or the whole project.
create table maintenance_windows (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null default '',
  starts_at timestamptz,
  ends_at timestamptz,
  cron text,
  duration_seconds integer check (duration_seconds between 60 and 604800),
  timezone text not null default 'UTC',
  whole_project boolean not null default false,
  monitor_ids uuid[] not null default '{}',
  heartbeat_ids uuid[] not null default '{}',
  active boolean not null default true,
  -- The boundary worker's state: the end of the occurrence in progress (null: none), and the next
  -- instant at which the window starts, ends or must be looked at again (null: never again).
  active_until timestamptz,
  next_boundary_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((cron is null) = (duration_seconds is null)),
  check ((cron is null) = (starts_at is not null and ends_at is not null)),
  check (starts_at is null or starts_at < ends_at)
);
create index maintenance_windows_project_idx on maintenance_windows (project_id, created_at, id);
-- The one timer of the boundary worker is armed for the earliest of these.
create index maintenance_windows_boundary_idx on maintenance_windows (next_boundary_at) where next_boundary_at is not null;

-- A window written (by any process) wakes the boundary workers, which look at it at once.
create function wake_maintenance_boundaries() returns trigger language plpgsql as $$
begin
  perform pg_notify('maintenance_changed', '');
  return null;
end $$;
create trigger maintenance_windows_changed after insert or update of next_boundary_at on maintenance_windows
  for each statement execute function wake_maintenance_boundaries();

-- The time windows actually covered, as recorded by the boundary worker: what uptime leaves out.
-- The scope is copied, so editing or deleting a window later does not rewrite past uptime.
create table maintenance_occurrences (
  id uuid primary key default gen_random_uuid(),
  window_id uuid references maintenance_windows (id) on delete set null,
  project_id uuid not null references projects (id) on delete cascade,
  whole_project boolean not null,
  monitor_ids uuid[] not null,
  heartbeat_ids uuid[] not null,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  check (starts_at <= ends_at)
);
create index maintenance_occurrences_project_idx on maintenance_occurrences (project_id, ends_at);
create index maintenance_occurrences_window_idx on maintenance_occurrences (window_id, ends_at);

-- The maintenance time of one monitor within [p_from, p_to), as one multirange (overlaps merged).
create function maintenance_ranges(p_project uuid, p_monitor uuid, p_from timestamptz, p_to timestamptz)
returns tstzmultirange language sql stable as $$
  select coalesce(range_agg(tstzrange(greatest(starts_at, p_from), least(ends_at, p_to))), '{}'::tstzmultirange)
  from maintenance_occurrences
  where project_id = p_project and ends_at > p_from and starts_at < p_to and p_from < p_to
    and (whole_project or p_monitor = any(monitor_ids))
$$;

-- Seconds in a multirange.
create function multirange_seconds(r tstzmultirange) returns float8 language sql immutable as $$
  select coalesce(sum(extract(epoch from (upper(x) - lower(x)))), 0)::float8 from unnest(r) as x
$$;

-- Alerts the router held because a window covered their subject when they occurred. A held down
-- is released (its deliveries made) when the window ends and the subject is still down, or
-- dropped; its up, when it comes, is dropped with it ('recovered'). An up is sent only when its
-- down was.
create table held_alerts (
  event_id uuid primary key,
  project_id uuid not null,
  subject_type text not null,
  subject_id uuid not null,
  kind text not null,
  payload jsonb not null,
  occurred_at timestamptz not null,
  release_at timestamptz not null,
  status text not null default 'held' check (status in ('held', 'released', 'dropped', 'recovered')),
  created_at timestamptz not null default now(),
  decided_at timestamptz
);
create index held_alerts_due_idx on held_alerts (release_at) where status = 'held';
-- Downs not (yet) notified, which their up must find.
create index held_alerts_open_idx on held_alerts (subject_id) where status in ('held', 'dropped');
create index held_alerts_project_idx on held_alerts (project_id) where status in ('held', 'dropped');
