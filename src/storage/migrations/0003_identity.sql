-- The append-only event log: every write appends its events here and updates
-- the current-state tables below in the same transaction. `position` is the
-- `details.sequence` of docs/api/README.md; writers take an advisory lock
-- before appending, so positions are allocated and committed in the same
-- order.
CREATE TABLE events (
  position        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  aggregate_type  text        NOT NULL,
  aggregate_id    text        NOT NULL,
  event_type      text        NOT NULL,
  resource_owner  text        NOT NULL,
  creator         text,
  payload         jsonb       NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL
);
CREATE INDEX events_aggregate ON events (aggregate_type, aggregate_id, position);

-- Every current-state row carries the sequence and dates of its own events
-- (`details` on read, docs/api/README.md): creation = first event, change =
-- last event.
CREATE TABLE instance (
  id              text        PRIMARY KEY,
  default_org_id  text        NOT NULL,
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL
);

CREATE TABLE orgs (
  id              text        PRIMARY KEY,
  name            text        NOT NULL,
  state           text        NOT NULL DEFAULT 'active',
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL
);

-- Domains are unique across the instance: they make login names unique.
CREATE TABLE org_domains (
  domain          text        PRIMARY KEY CHECK (domain = lower(domain)),
  org_id          text        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  is_primary      boolean     NOT NULL DEFAULT false,
  is_verified     boolean     NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX org_domains_one_primary ON org_domains (org_id) WHERE is_primary;

CREATE TABLE users (
  id                  text        PRIMARY KEY,
  org_id              text        NOT NULL REFERENCES orgs (id),
  type                text        NOT NULL CHECK (type IN ('human', 'machine')),
  user_name           text        NOT NULL,
  state               text        NOT NULL DEFAULT 'active',
  -- human
  first_name          text,
  last_name           text,
  nick_name           text,
  display_name        text,
  preferred_language  text,
  gender              text,
  email               text,
  email_verified      boolean,
  phone               text,
  phone_verified      boolean,
  password_hash       text,
  password_changed_at timestamptz,
  -- machine
  name                text,
  description         text,
  access_token_type   text,
  sequence            bigint      NOT NULL,
  creation_date       timestamptz NOT NULL,
  change_date         timestamptz NOT NULL
);
-- A login name is userName@primaryDomain, so a userName is unique in its org.
CREATE UNIQUE INDEX users_org_user_name ON users (org_id, lower(user_name));
CREATE INDEX users_user_name ON users (lower(user_name));

-- Role memberships: on the instance (scope_id = instance id) or on an org.
CREATE TABLE memberships (
  user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  scope       text        NOT NULL CHECK (scope IN ('instance', 'org')),
  scope_id    text        NOT NULL,
  roles       text[]      NOT NULL,
  PRIMARY KEY (user_id, scope, scope_id)
);

-- Personal access tokens: only a keyed SHA-256 digest of the token is kept.
CREATE TABLE personal_access_tokens (
  id          text        PRIMARY KEY,
  user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  digest      bytea       NOT NULL UNIQUE,
  expires_at  timestamptz,
  created_at  timestamptz NOT NULL
);

-- Public keys of machine users (JWT profile grant); the private key is
-- handed to the caller once and never stored.
CREATE TABLE machine_keys (
  id          text        PRIMARY KEY,
  user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  public_jwk  jsonb       NOT NULL,
  expires_at  timestamptz,
  created_at  timestamptz NOT NULL
);
CREATE INDEX machine_keys_user ON machine_keys (user_id);
