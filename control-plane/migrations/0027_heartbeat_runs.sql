-- Heartbeat run rules (docs/heartbeats.md): a run-time limit after /start, a minimum run time,
-- a too-frequent rule, failure tolerance, exit codes that mean success and output rules; and
-- what the rules track between pings: runs opened with a run id, the last success, and failed
-- runs in a row.
alter table heartbeats
  add column max_duration integer check (max_duration between 1 and 31536000),
  add column min_duration integer check (min_duration between 1 and 31536000),
  add column too_frequent_ratio double precision check (too_frequent_ratio > 0 and too_frequent_ratio <= 1),
  add column alert_after_failures integer not null default 1 check (alert_after_failures between 1 and 100),
  add column success_exit_codes smallint[] not null default '{0}',
  -- [{match: contains|regex, value, outcome: success|fail}]
  add column output_rules jsonb not null default '[]',
  -- open runs with a run id: [{rid, started_at}], oldest first
  add column runs jsonb not null default '[]',
  add column last_success_at timestamptz,
  add column failed_runs integer not null default 0;

-- The last completion was a success for every heartbeat that last completed one before this
-- column existed (the rules had no other way to fail a success then).
update heartbeats set last_success_at = last_ping_at where last_ping_kind = 'success';

-- Each ping as the rules judged it: its run id, the outcome of a completion and why it failed,
-- and how long its run took (from the /start it closed).
alter table heartbeat_pings
  add column rid uuid,
  add column outcome text check (outcome in ('success', 'fail')),
  add column reason text,
  add column duration_ms bigint;
