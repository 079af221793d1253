-- Accounts and tenancy: users belong to organizations through memberships; projects belong
-- to organizations; every monitored resource belongs to a project.

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  name text not null default '',
  password_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table memberships (
  organization_id uuid not null references organizations (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'member')),
  created_at timestamptz not null default now(),
  primary key (organization_id, user_id)
);
create index memberships_user_idx on memberships (user_id);

create table projects (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  description text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index projects_organization_idx on projects (organization_id);

-- Bearer tokens: only the SHA-256 of a token is kept. kind 'api' opens the REST API,
-- kind 'mcp' opens the MCP endpoint; neither opens the other.
create table api_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  kind text not null check (kind in ('api', 'mcp')),
  name text not null,
  token_hash bytea not null unique,
  token_prefix text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_tokens_user_idx on api_tokens (user_id);
create unique index api_tokens_active_name_key on api_tokens (user_id, kind, name) where revoked_at is null;
