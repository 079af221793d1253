-- Subscribers of a status page (docs/status-pages.md "Subscribers", ADR 0042): people by email
-- (double opt-in) and programs by webhook. What a page tells them is a notice (an incident update
-- published, a maintenance window starting or ending); each notice becomes one delivery per
-- confirmed subscriber, sent from a queue in Postgres like the alert deliveries (ADR 0023).

create table status_page_subscribers (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  kind text not null check (kind in ('email', 'webhook')),
  -- email: the address as given (its case kept), matched without case
  email text check (email is null or char_length(email) <= 254),
  -- webhook: the URL and the signing secret, sealed (the integration-secrets key); the URL's
  -- host kept apart so that a list can say where it goes without opening it
  webhook_sealed text,
  webhook_host text,
  webhook_signed boolean not null default false,
  -- null while an email subscriber has not confirmed; a webhook is confirmed when added
  confirmed_at timestamptz,
  -- when the last confirmation email was asked for (a repeat within minutes sends none)
  confirmation_sent_at timestamptz,
  -- who added it: null for a visitor of the page, else the API token's or session's user
  added_by text,
  created_at timestamptz not null default now(),
  check ((kind = 'email') = (email is not null)),
  check ((kind = 'webhook') = (webhook_sealed is not null))
);
create unique index status_page_subscribers_email_key on status_page_subscribers (status_page_id, lower(email)) where email is not null;
create index status_page_subscribers_page_idx on status_page_subscribers (status_page_id, created_at, id);
create index status_page_subscribers_pending_idx on status_page_subscribers (created_at) where confirmed_at is null;

-- What a page tells its subscribers, once per source: `update:<incident update id>`,
-- `maintenance:<window id>:<occurrence start>:started|ended`. The payload is what the messages
-- say, fixed when the notice is made; fanned_out_at is set once its deliveries exist.
create table status_page_notices (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  source_key text not null,
  kind text not null check (kind in ('incident', 'maintenance')),
  payload jsonb not null,
  created_at timestamptz not null default now(),
  fanned_out_at timestamptz,
  unique (status_page_id, source_key)
);
create index status_page_notices_pending_idx on status_page_notices (created_at) where fanned_out_at is null;
-- An incident's notices, to tell a first one from a later one.
create index status_page_notices_incident_idx on status_page_notices ((payload ->> 'incident_id')) where kind = 'incident';

-- The queue: one row per message to one subscriber. A notice's row is unique per subscriber; a
-- confirmation's per subscriber and request (dedupe_key).
create table subscriber_deliveries (
  id uuid primary key default gen_random_uuid(),
  subscriber_id uuid not null references status_page_subscribers (id) on delete cascade,
  notice_id uuid references status_page_notices (id) on delete cascade,
  purpose text not null check (purpose in ('notice', 'confirm')),
  dedupe_key text not null unique,
  status text not null default 'pending' check (status in ('pending', 'sending', 'delivered', 'dead')),
  attempts integer not null default 0,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  claimed_until timestamptz,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((purpose = 'notice') = (notice_id is not null))
);
create index subscriber_deliveries_due_idx on subscriber_deliveries (next_attempt_at) where status in ('pending', 'sending');
create index subscriber_deliveries_subscriber_idx on subscriber_deliveries (subscriber_id);
create index subscriber_deliveries_notice_idx on subscriber_deliveries (notice_id);

create function wake_subscriber_work() returns trigger language plpgsql as $$
begin
  perform pg_notify('subscriber_work', '');
  return null;
end $$;

create trigger status_page_notices_created after insert on status_page_notices
  for each statement execute function wake_subscriber_work();
create trigger subscriber_deliveries_created after insert on subscriber_deliveries
  for each statement execute function wake_subscriber_work();
