-- Sign-in throttling by (account, client address), by account and by address, each with a delay
-- growing per failure (control-plane/src/web/throttle-rule.ts) instead of fixed windows per email
-- and per address, which let anyone lock a user out with five wrong passwords. One row per
-- counter, keyed 'pair:<address> <email>', 'account:<email>', 'address:<address>'; a counter is
-- forgotten an hour after its last failure. The old counters are transient: they are dropped.
drop table sign_in_attempts;
create table sign_in_failures (
  key text primary key,
  failures integer not null default 0,
  last_failure_at timestamptz
);

-- Addresses each account signed in from: an attack spread over other addresses does not slow
-- the account down from these. Kept 30 days after the last sign-in.
create table sign_in_addresses (
  email text not null,
  address text not null,
  signed_in_at timestamptz not null,
  primary key (email, address)
);
