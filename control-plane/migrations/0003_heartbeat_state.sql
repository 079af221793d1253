-- The rest of a heartbeat's state (control-plane/src/heartbeats/state.ts), so that it survives a
-- restart and a pause: which ping came last, when the running job started, and whether a down
-- period is open (a pause or a /start does not end it; only a success ping does).
alter table heartbeats
  add column last_ping_kind text check (last_ping_kind in ('success', 'start', 'fail')),
  add column started_at timestamptz,
  add column down_since timestamptz;
