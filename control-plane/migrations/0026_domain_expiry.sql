-- Domain expiry (docs/checks.md). The registrable domain of a monitor's URL host (example.com for
-- api.example.com), worked out by the control plane when the monitor is written: '' when there
-- is none (an IP address, a single-label name); null for monitors written before this column,
-- until the domain-expiry job has worked it out. It joins the monitor to its domain's row.
alter table monitors add column registrable_domain text;
create index monitors_registrable_domain_idx on monitors (registrable_domain) where registrable_domain <> '';
create index monitors_registrable_domain_unknown_idx on monitors (id) where registrable_domain is null;

-- One row per registrable domain an active monitor uses (monitors share it): what the registry
-- said at the last lookup, and when to look it up again (daily; an hour after a failure).
create table domain_expiry (
  domain text primary key,
  -- The last expiry date known: kept through a failed lookup, cleared by a registry that publishes none.
  expires_at timestamptz,
  registrar text,
  looked_up_at timestamptz,
  ok boolean not null default false,
  -- Why the last lookup gave no answer (names the RDAP server's host, never what it sent).
  error text,
  next_lookup_at timestamptz not null
);
create index domain_expiry_due_idx on domain_expiry (next_lookup_at);

-- Work one process does for the whole deployment at a time (the domain lookups): who holds it and
-- until when, by Postgres's clock. A holder renews it while it works; another process takes it
-- over once it has run out.
create table leases (
  name text primary key,
  holder text not null,
  expires_at timestamptz not null
);
