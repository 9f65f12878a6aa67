CREATE TABLE projects (
  id              text        PRIMARY KEY,
  org_id          text        NOT NULL REFERENCES orgs (id),
  name            text        NOT NULL,
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL
);
CREATE INDEX projects_org ON projects (org_id);

CREATE TABLE project_roles (
  project_id      text        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  role_key        text        NOT NULL,
  display_name    text        NOT NULL,
  PRIMARY KEY (project_id, role_key)
);

-- OIDC apps: the engine's clients. Only a keyed digest of a client secret
-- is kept (generated secrets have 256 bits of entropy).
CREATE TABLE apps (
  id                           text        PRIMARY KEY,
  project_id                   text        NOT NULL REFERENCES projects (id),
  org_id                       text        NOT NULL REFERENCES orgs (id),
  client_id                    text        NOT NULL UNIQUE,
  name                         text        NOT NULL,
  redirect_uris                text[]      NOT NULL,
  post_logout_redirect_uris    text[]      NOT NULL,
  response_types               text[]      NOT NULL,
  grant_types                  text[]      NOT NULL,
  app_type                     text        NOT NULL,
  auth_method                  text        NOT NULL,
  access_token_type            text        NOT NULL,
  id_token_userinfo_assertion  boolean     NOT NULL DEFAULT false,
  access_token_role_assertion  boolean     NOT NULL DEFAULT false,
  id_token_role_assertion      boolean     NOT NULL DEFAULT false,
  dev_mode                     boolean     NOT NULL DEFAULT false,
  secret_digest                bytea,
  sequence                     bigint      NOT NULL,
  creation_date                timestamptz NOT NULL,
  change_date                  timestamptz NOT NULL
);
CREATE INDEX apps_project ON apps (project_id);

-- Public keys of apps authenticating with private_key_jwt.
CREATE TABLE app_keys (
  id          text        PRIMARY KEY,
  app_id      text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  public_jwk  jsonb       NOT NULL,
  expires_at  timestamptz,
  created_at  timestamptz NOT NULL
);
CREATE INDEX app_keys_app ON app_keys (app_id);

-- A machine user's client secret (client_credentials), as a keyed digest.
ALTER TABLE users ADD COLUMN secret_digest bytea;

-- Roles of a project granted to a user.
CREATE TABLE user_grants (
  id              text        PRIMARY KEY,
  user_id         text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  project_id      text        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  org_id          text        NOT NULL REFERENCES orgs (id),
  role_keys       text[]      NOT NULL,
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL,
  UNIQUE (user_id, project_id)
);

-- Instance feature flags (docs/api/features.md).
CREATE TABLE instance_features (
  name            text        PRIMARY KEY,
  enabled         boolean     NOT NULL,
  sequence        bigint      NOT NULL,
  change_date     timestamptz NOT NULL
);
