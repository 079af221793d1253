-- Status pages as a resource of their own (docs/status-pages.md, ADR 0036): several pages per
-- project, each with an id, a title and a description, showing groups of components (a monitor
-- or a heartbeat each). A page's address is still its random slug; the pages that exist keep
-- theirs.

alter table status_pages drop constraint status_pages_pkey;
alter table status_pages
  add column id uuid not null default gen_random_uuid(),
  add column description text not null default '',
  add column updated_at timestamptz;
alter table status_pages add primary key (id);
create index status_pages_project_idx on status_pages (project_id, created_at, id);

-- A page made before this had no title of its own: it showed its project's name, so it keeps
-- that name as its title.
update status_pages s set title = coalesce(nullif(p.name, ''), 'Status') from projects p where p.id = s.project_id and s.title = '';
update status_pages set updated_at = created_at;
alter table status_pages
  alter column title drop default,
  alter column updated_at set not null,
  alter column updated_at set default now(),
  add constraint status_pages_title_check check (char_length(title) between 1 and 255);

-- Headings a page's components are shown under, in order. Names are unique on a page (so an
-- update that keeps a name keeps the group, and what later refers to it).
create table status_page_groups (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  position integer not null,
  created_at timestamptz not null default now()
);
create unique index status_page_groups_name_key on status_page_groups (status_page_id, lower(name));

-- What a page shows: one monitor or one heartbeat each, in a group or (reserved: the API always
-- names a group today) in none. A subject is on a page at most once, so an update that keeps it
-- keeps its row. Deleting the monitor or heartbeat removes it from every page.
create table status_page_components (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  group_id uuid references status_page_groups (id) on delete cascade,
  monitor_id uuid references monitors (id) on delete cascade,
  heartbeat_id uuid references heartbeats (id) on delete cascade,
  -- null: the monitor's or heartbeat's own name
  display_name text check (char_length(display_name) between 1 and 255),
  description text not null default '',
  position integer not null,
  created_at timestamptz not null default now(),
  check ((monitor_id is null) <> (heartbeat_id is null)),
  unique (status_page_id, monitor_id),
  unique (status_page_id, heartbeat_id)
);
create index status_page_components_page_idx on status_page_components (status_page_id, position);
create index status_page_components_group_idx on status_page_components (group_id);
create index status_page_components_monitor_idx on status_page_components (monitor_id) where monitor_id is not null;
create index status_page_components_heartbeat_idx on status_page_components (heartbeat_id) where heartbeat_id is not null;
