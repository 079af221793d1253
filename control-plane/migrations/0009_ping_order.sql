-- Pings that reach the deadline actors out of stream order (a delivery lost in a consumer leader
-- change and redelivered after later pings were applied) are merged into the heartbeat's history
-- (control-plane/src/heartbeats/history.ts). For that the log keeps each ping's stream timestamp,
-- the instant the rules order it by, and the rules' state right after it was applied.

alter table heartbeat_pings
  add column at timestamptz,
  -- {status, next_ping_at, last_ping_at, last_ping_kind, started_at, down_since}
  add column state_after jsonb;
