-- The instance's SMS relay (docs/api/sms.md): one row at most. The signing
-- key is sealed with a key derived from the master key, bound to this row.
CREATE TABLE sms_relay_settings (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  endpoint text NOT NULL,
  signing_key_sealed bytea NOT NULL,
  sequence bigint NOT NULL,
  creation_date timestamptz NOT NULL,
  change_date timestamptz NOT NULL
);

-- How a queued message travels: a mail to an address, or an SMS to a phone
-- number through the relay. Messages queued before were all mails.
ALTER TABLE notification_outbox ADD COLUMN channel text NOT NULL DEFAULT 'email' CHECK (channel IN ('email', 'sms'));
