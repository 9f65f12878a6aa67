-- External identity providers (docs/idps.md): at the instance (org_id NULL,
-- IAM_OWNER's) or of one org. `config` holds the kind's fields less its
-- secret; the client secret is sealed with a key derived from the master
-- key, bound to the provider's id.
CREATE TABLE identity_providers (
  id             text        PRIMARY KEY,
  org_id         text        REFERENCES orgs (id) ON DELETE CASCADE,
  kind           text        NOT NULL,
  name           text        NOT NULL,
  config         jsonb       NOT NULL,
  options        jsonb       NOT NULL,
  secret_sealed  bytea,
  sequence       bigint      NOT NULL,
  creation_date  timestamptz NOT NULL,
  change_date    timestamptz NOT NULL
);
CREATE INDEX identity_providers_org ON identity_providers (org_id);

-- The providers a login policy shows (the instance default: org_id NULL).
-- An org's list applies while the org has a login policy of its own.
CREATE TABLE login_policy_idps (
  org_id         text        REFERENCES orgs (id) ON DELETE CASCADE,
  idp_id         text        NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
  creation_date  timestamptz NOT NULL
);
CREATE UNIQUE INDEX login_policy_idps_unique ON login_policy_idps (coalesce(org_id, ''), idp_id);

-- A user's identity at a provider: (provider, the provider's id of the user)
-- names one user of ours.
CREATE TABLE user_idp_links (
  idp_id              text        NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
  provided_user_id    text        NOT NULL,
  user_id             text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  provided_user_name  text        NOT NULL DEFAULT '',
  creation_date       timestamptz NOT NULL,
  PRIMARY KEY (idp_id, provided_user_id)
);
CREATE INDEX user_idp_links_user ON user_idp_links (user_id);
