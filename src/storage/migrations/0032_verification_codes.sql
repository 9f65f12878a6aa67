-- Codes of the self-service flows (docs/self-service.md): an invitation, an email
-- verification, a password reset. Only keyed SHA-256 digests are kept (one
-- of the typed code, one of the link's); `mailed` marks the codes sent in a
-- message, which the per-user message limit counts. Used and expired codes
-- stay until the next code of the same user and purpose clears them, so a
-- reused or expired code is told apart from a wrong one.
CREATE TABLE verification_codes (
  id bigserial PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('init', 'email', 'reset')),
  typed_digest bytea NOT NULL,
  link_digest bytea NOT NULL,
  mailed boolean NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX verification_codes_user ON verification_codes (user_id, purpose, created_at);
