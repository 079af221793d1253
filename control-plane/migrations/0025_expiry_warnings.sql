-- Expiry warnings (docs/checks.md). The days before a monitor's certificate or its domain's
-- registration runs out at which it warns, each once, most distant first; an empty list turns
-- that warning off.
alter table monitors
  add column certificate_expiry_days int[] not null default '{30,14,7,1}',
  add column domain_expiry_days int[] not null default '{30,14,7,1}';

-- The latest certificate a monitor's checks presented (details.certificate of a result). Written
-- when it is another certificate or a warning is due, not once per check.
create table monitor_certificates (
  monitor_id uuid primary key references monitors (id) on delete cascade,
  certificate jsonb not null,
  fingerprint256 text not null,
  valid_to timestamptz not null,
  -- When the check that presented it ran: an older result never replaces it.
  checked_at timestamptz not null
);

-- Every expiry warning recorded, under the key that makes it once only: per monitor, per thing
-- that runs out (a certificate by its fingerprint, a domain with its expiry date: a renewal is a
-- new subject and warns again) and per threshold.
create table expiry_warnings (
  monitor_id uuid not null references monitors (id) on delete cascade,
  kind text not null check (kind in ('certificate', 'domain')),
  subject text not null,
  threshold_days int not null,
  warned_at timestamptz not null,
  primary key (monitor_id, kind, subject, threshold_days)
);
