-- Passkeys (WebAuthn Level 2 discoverable credentials, docs/security.md):
-- the credential's public key (COSE) and signature counter; the credential id
-- as the authenticator sends it (base64url), unique across users.
CREATE TABLE user_passkeys (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_passkeys_user ON user_passkeys (user_id);
