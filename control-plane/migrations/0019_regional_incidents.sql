-- Regional incidents (ADR 0031): a monitor failing in some regions, fewer than its quorum. Kept
-- apart from incidents, which are the monitor's outages and what its uptime counts.
create table regional_incidents (
  id uuid primary key default gen_random_uuid(),
  monitor_id uuid not null references monitors (id) on delete cascade,
  started_at timestamptz not null,
  ended_at timestamptz,
  cause text not null default '',
  regions text[] not null default '{}',
  evidence jsonb not null default '[]'
);
create index regional_incidents_monitor_idx on regional_incidents (monitor_id, started_at desc);
create unique index regional_incidents_one_open_key on regional_incidents (monitor_id) where ended_at is null;

alter table monitors
  -- The regions of the open regional incident; null when none is open (read by the ingest with the monitor).
  add column regional_regions text[],
  -- Send regional incidents to the monitor's integrations too (monitor.regional_down / monitor.regional_up).
  add column alert_regional boolean not null default false;

-- Since when a region's latest results have failed without a pass (null while it passes): a
-- regional incident opens only once a failure has lasted long enough for a broken probe region to
-- have been judged degraded first.
alter table monitor_regions add column failing_since timestamptz;
