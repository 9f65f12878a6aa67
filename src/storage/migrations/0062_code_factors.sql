-- One-time codes sent by mail or SMS as second factors, and phone
-- verification (docs/self-service.md). Their codes join the other codes of
-- the self-service flows (keyed digests only). A row of user_code_factors is
-- a set-up confirmed by one code sent to the address or number; the factor
-- counts only while that address or number is verified.
ALTER TABLE verification_codes DROP CONSTRAINT verification_codes_purpose_check;
ALTER TABLE verification_codes ADD CONSTRAINT verification_codes_purpose_check
  CHECK (purpose IN ('init', 'email', 'reset', 'phone', 'otp_email', 'otp_sms'));
CREATE TABLE user_code_factors (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, channel)
);
