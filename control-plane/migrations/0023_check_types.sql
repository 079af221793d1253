-- Check types and assertions (ADR 0034). A monitor has a type (http unless set), the type's
-- settings and a list of assertions. The settings hold secrets (header values, request bodies,
-- gRPC metadata): they are stored sealed whole, with a copy that has every secret value removed
-- for what the API shows.
alter table monitors
  add column type text not null default 'http',
  add column settings_sealed text,
  add column settings jsonb not null default '{}',
  add column assertions jsonb not null default '[]';

-- What a check saw beyond status and timings: assertion outcomes, certificate, DNS answers, ping
-- figures, steps; and whether a `degraded` assertion failed. Null for the plain HTTP checks that
-- make up most results.
alter table check_results
  add column degraded boolean,
  add column extra jsonb;
