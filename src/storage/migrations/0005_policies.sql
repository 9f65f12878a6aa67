-- Policies of every kind (lockout, login, ...): the instance default
-- (org_id NULL) and an org's override, at most one of each per kind. A kind
-- without a row has its built-in defaults; an org without a row follows the
-- instance. `settings` holds the kind's fields as the API writes them.
CREATE TABLE policies (
  kind            text        NOT NULL,
  org_id          text        REFERENCES orgs (id) ON DELETE CASCADE,
  settings        jsonb       NOT NULL,
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL
);
CREATE UNIQUE INDEX policies_instance ON policies (kind) WHERE org_id IS NULL;
CREATE UNIQUE INDEX policies_org ON policies (kind, org_id) WHERE org_id IS NOT NULL;
