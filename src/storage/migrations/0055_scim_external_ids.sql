-- SCIM 2.0 (RFC 7643 3.1): the provisioning client's own identifier of a
-- user, kept as given (caseExact). Unique in its org, so a client that finds
-- its users by `externalId eq "…"` finds one at most.
ALTER TABLE users ADD COLUMN external_id text;
CREATE UNIQUE INDEX users_org_external_id ON users (org_id, external_id) WHERE external_id IS NOT NULL;
-- SCIM lists sort by and filter on the change date (meta.lastModified).
CREATE INDEX users_org_change_date ON users (org_id, change_date, id);
