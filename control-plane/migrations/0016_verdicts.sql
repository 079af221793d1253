-- Verdicts across regions (docs/adr/0028-verdicts-across-regions.md): a monitor's quorum and
-- confirmation, the evidence an incident keeps, and the health of each probe region.

-- quorum: failing regions needed for down, null for a majority of the voting regions.
-- confirm_down / confirm_up: consecutive rounds (slots) the verdict must hold before the status
-- follows it; 1 and 1 are the behaviour before these columns existed.
-- verdict_prior / verdict_prior_since / verdict_dir / verdict_round: the rounds counted so far (monitors/status.ts
-- `nextStreak`), written only for monitors whose confirmation is above 1.
alter table monitors
  add column quorum smallint check (quorum between 1 and 50),
  add column confirm_down smallint not null default 1 check (confirm_down between 1 and 10),
  add column confirm_up smallint not null default 1 check (confirm_up between 1 and 10),
  add column verdict_prior smallint not null default 0,
  add column verdict_prior_since timestamptz,
  add column verdict_dir smallint not null default 0,
  add column verdict_round timestamptz;

-- A region's last result keeps what an incident shows as evidence.
alter table monitor_regions
  add column status_code smallint,
  add column total_ms real;

-- What each voting region saw when the incident opened: [{region, ok, status_code, error,
-- total_ms, checked_at, abstained}].
alter table incidents add column evidence jsonb not null default '[]';

-- Probe regions as the control plane judges them. A degraded region abstains: its results are
-- stored, but they do not vote. `reason`: canaries (its agents cannot reach their canaries),
-- disagreement (most of its monitors fail while other regions see them up) or silent (no live
-- agent). The row changes state by a conditional update, so one process records each change.
create table region_health (
  region text primary key,
  state text not null check (state in ('healthy', 'degraded')),
  reason text,
  since timestamptz not null,
  detail jsonb not null default '{}',
  updated_at timestamptz not null default now()
);
