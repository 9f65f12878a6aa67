-- SAML apps (docs/saml.md): service providers of a project, known by the
-- entityID of their metadata. The entityID is the Issuer of their requests,
-- so it names one app in the whole instance. What the IdP needs of the
-- metadata is kept parsed (ACS and logout endpoints, certificates); the
-- document itself is kept too, for the API's view and for audits.
CREATE TABLE saml_apps (
  id                     text        PRIMARY KEY,
  project_id             text        NOT NULL REFERENCES projects (id),
  org_id                 text        NOT NULL REFERENCES orgs (id),
  name                   text        NOT NULL,
  entity_id              text        NOT NULL UNIQUE,
  metadata_xml           text        NOT NULL,
  metadata_url           text,
  acs                    jsonb       NOT NULL,
  slo                    jsonb       NOT NULL,
  certificates           text[]      NOT NULL,
  authn_requests_signed  boolean     NOT NULL,
  sequence               bigint      NOT NULL,
  creation_date          timestamptz NOT NULL,
  change_date            timestamptz NOT NULL
);
CREATE INDEX saml_apps_project ON saml_apps (project_id);
