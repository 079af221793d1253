-- The web dashboard: sign-in sessions, the sign-in throttle, public status pages and badges.

-- A session cookie holds 32 random bytes; only their SHA-256 is kept, as with API tokens.
-- csrf_token is the synchronizer token every form of the session carries. project_id is the
-- project the dashboard shows (the switcher); flash is a one-shot notice for the next page.
create table web_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  token_hash bytea not null unique,
  csrf_token text not null,
  project_id uuid references projects (id) on delete set null,
  flash text,
  user_agent text,
  ip text,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index web_sessions_user_idx on web_sessions (user_id);
create index web_sessions_expires_idx on web_sessions (expires_at);

-- Fixed-window counters of sign-in attempts, keyed 'email:<lower(email)>' and 'ip:<address>'.
-- Kept in Postgres so every control-plane process enforces the same limit.
create table sign_in_attempts (
  key text primary key,
  window_start timestamptz not null,
  attempts integer not null
);

-- A project's public status page: it exists (and is public) while its row does. The slug is
-- random and unguessable; regenerating it retires the old address.
create table status_pages (
  project_id uuid primary key references projects (id) on delete cascade,
  slug text not null unique,
  title text not null default '',
  created_at timestamptz not null default now()
);

-- Public SVG badges of one monitor or one heartbeat, at an unguessable address.
create table badges (
  slug text primary key,
  monitor_id uuid unique references monitors (id) on delete cascade,
  heartbeat_id uuid unique references heartbeats (id) on delete cascade,
  created_at timestamptz not null default now(),
  check ((monitor_id is null) <> (heartbeat_id is null))
);
