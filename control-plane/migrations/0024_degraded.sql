-- The degraded state (ADR 0034): a monitor that is up, but whose checks in a quorum of its
-- regions fail a `degraded` assertion (or fail outright, fewer than the quorum). Like a regional
-- incident, a degraded period is recorded apart from outages: it does not count against uptime,
-- and it is sent only to monitors that ask (`alert_degraded`).
create table degraded_periods (
  id uuid primary key default gen_random_uuid(),
  monitor_id uuid not null references monitors (id) on delete cascade,
  started_at timestamptz not null,
  ended_at timestamptz,
  -- the first degraded assertion's message that opened it
  cause text not null default '',
  regions text[] not null default '{}'
);
create index degraded_periods_monitor_idx on degraded_periods (monitor_id, started_at desc);
create unique index degraded_periods_one_open_key on degraded_periods (monitor_id) where ended_at is null;

alter table monitors
  add column alert_degraded boolean not null default false,
  -- the regions of the open degraded period; null when none is open (read by the ingest with the monitor)
  add column degraded_regions text[];

-- Each region's latest vote says whether it was degraded, since when, and why.
alter table monitor_regions
  add column degraded boolean not null default false,
  add column degraded_since timestamptz,
  add column degraded_reason text;

-- Seconds of a monitor's degraded periods within [p_since, p_until), less maintenance (as
-- monitor_down_seconds counts its outages): shown beside its uptime, never in it.
create function monitor_degraded_seconds(p_monitor uuid, p_since timestamptz, p_until timestamptz, p_maintenance tstzmultirange)
returns float8 language sql stable as $$
  select coalesce(sum(multirange_seconds(tstzmultirange(tstzrange(i.lo, greatest(i.lo, i.hi))) - p_maintenance)), 0)::float8
  from (
    select greatest(started_at, p_since) as lo, least(coalesce(ended_at, p_until), p_until) as hi
    from degraded_periods
    where monitor_id = p_monitor and started_at < p_until and coalesce(ended_at, p_until) > p_since
  ) i
$$;
