-- A user's metadata (docs/api/users.md, "Metadata"): keyed bytes the
-- instance's integrations attach to a user, released in tokens with the
-- scope urn:service:iam:user:metadata. Removed with the user.
CREATE TABLE user_metadata (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key text NOT NULL,
  value bytea NOT NULL,
  sequence bigint NOT NULL,
  creation_date timestamptz NOT NULL,
  change_date timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);
