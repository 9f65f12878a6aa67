-- Records of the oidc-provider engine that live in PostgreSQL: the durable
-- ones always (Grant, RefreshToken), and every short-lived one when no Redis
-- is configured. One row per (model, id); the indexed columns serve the
-- engine's secondary look-ups.
CREATE TABLE engine_records (
  model       text        NOT NULL,
  id          text        NOT NULL,
  payload     jsonb       NOT NULL,
  grant_id    text,
  uid         text,
  user_code   text,
  expires_at  timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);

CREATE INDEX engine_records_grant ON engine_records (model, grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX engine_records_uid ON engine_records (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX engine_records_user_code ON engine_records (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX engine_records_expiry ON engine_records (expires_at) WHERE expires_at IS NOT NULL;
