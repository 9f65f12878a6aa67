-- Second factors (docs/security.md, Second factors): a user's authenticator
-- app (TOTP, RFC 6238) and its one-time recovery codes. The TOTP secret is
-- sealed with a key derived from the master key (AES-256-GCM, bound to the
-- user id); recovery codes are kept as keyed SHA-256 digests only.
-- last_step: the last time step whose code was accepted (no replay).
CREATE TABLE user_otp (
  user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret bytea NOT NULL,
  ready boolean NOT NULL DEFAULT false,
  last_step bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE user_recovery_codes (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  digest bytea NOT NULL,
  PRIMARY KEY (user_id, digest)
);
-- The lockout policy's count of consecutive wrong codes (maxOtpAttempts).
ALTER TABLE users ADD COLUMN failed_otp_attempts integer NOT NULL DEFAULT 0;
