-- OIDC Back-Channel Logout 1.0: where an app receives logout tokens, and
-- whether they must carry the session id.
ALTER TABLE apps ADD COLUMN backchannel_logout_uri text;
ALTER TABLE apps ADD COLUMN backchannel_logout_session_required boolean NOT NULL DEFAULT false;

-- The browser sessions of each user (the engine keeps sessions by id only,
-- in Redis or engine_records), so all of them can be ended at once
-- (DELETE /management/v1/users/{id}/sessions).
CREATE TABLE user_sessions (
  account_id  text        NOT NULL,
  session_id  text        NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (account_id, session_id)
);
CREATE INDEX user_sessions_session ON user_sessions (session_id);
