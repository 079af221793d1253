-- Incidents written on a status page (docs/status-pages.md, ADR 0038): a title, an impact, a
-- status moved by dated updates, the components it affects, a postmortem. Drafted on their own
-- from the outages of what a page shows; public only once published.

-- Drafts made from outages are published at once on a page that asks for it.
alter table status_pages add column auto_publish_incidents boolean not null default false;

create table status_page_incidents (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  title text not null check (char_length(title) between 1 and 255),
  impact text not null check (impact in ('none', 'minor', 'major', 'critical')),
  status text not null check (status in ('investigating', 'identified', 'monitoring', 'resolved')),
  -- null: a draft, seen only in the dashboard and the API
  published_at timestamptz,
  -- who published it; null while a draft, or when it was published on its own (auto_publish_incidents)
  published_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- set while its status is resolved
  resolved_at timestamptz,
  postmortem text not null default '' check (char_length(postmortem) <= 50000),
  -- null: the postmortem is not shown publicly
  postmortem_published_at timestamptz,
  -- The outage it was drafted from, if any: its subject, its key (status_page_outages.key) and
  -- when the drafter saw it end (set once; the end is acted on once).
  source_monitor_id uuid references monitors (id) on delete set null,
  source_heartbeat_id uuid references heartbeats (id) on delete set null,
  source_key text,
  source_ended_at timestamptz,
  check (num_nonnulls(source_monitor_id, source_heartbeat_id) <= 1),
  check ((status = 'resolved') = (resolved_at is not null))
);
create index status_page_incidents_page_idx on status_page_incidents (status_page_id, created_at desc, id);
create index status_page_incidents_open_idx on status_page_incidents (status_page_id) where resolved_at is null;
create index status_page_incidents_source_idx on status_page_incidents (source_key) where source_key is not null;

-- Its timeline: each update says the status it moved to and a message (Markdown).
create table status_page_incident_updates (
  id uuid primary key default gen_random_uuid(),
  incident_id uuid not null references status_page_incidents (id) on delete cascade,
  status text not null check (status in ('investigating', 'identified', 'monitoring', 'resolved')),
  message text not null check (char_length(message) between 1 and 10000),
  at timestamptz not null,
  -- who posted it; null: posted on its own from the outage
  posted_by text
);
create index status_page_incident_updates_incident_idx on status_page_incident_updates (incident_id, at desc, id);

-- What it affects: monitors and heartbeats the page shows. A subject rather than a component row,
-- so that pages without groups (which have no rows) name them too, and an incident keeps them
-- through edits of the page's layout.
create table status_page_incident_components (
  incident_id uuid not null references status_page_incidents (id) on delete cascade,
  monitor_id uuid references monitors (id) on delete cascade,
  heartbeat_id uuid references heartbeats (id) on delete cascade,
  position integer not null,
  check ((monitor_id is null) <> (heartbeat_id is null)),
  unique (incident_id, monitor_id),
  unique (incident_id, heartbeat_id)
);
create index status_page_incident_components_incident_idx on status_page_incident_components (incident_id, position);

-- The outages the drafter has seen, by key (`monitor:<incident id>`, `heartbeat:<id>:<down_since>`):
-- an end may be read before its start (a redelivery, a batch handed back), and is then waiting here.
create table status_page_outages (
  key text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  subject_type text not null check (subject_type in ('monitor', 'heartbeat')),
  subject_id uuid not null,
  started_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz not null default now()
);
create index status_page_outages_created_idx on status_page_outages (created_at);

-- One draft per outage per page, ever: kept when the incident is deleted, so that a replayed down
-- does not draft it again.
create table status_page_drafted (
  status_page_id uuid not null references status_pages (id) on delete cascade,
  outage_key text not null,
  incident_id uuid references status_page_incidents (id) on delete set null,
  primary key (status_page_id, outage_key)
);
