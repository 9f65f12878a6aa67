-- The instance's SMTP server, set by its owner through the admin API
-- (docs/api/notifications.md): one row at most. The password is sealed with
-- a key derived from the master key, bound to this row.
CREATE TABLE smtp_settings (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  sender_address text NOT NULL,
  sender_name text NOT NULL DEFAULT '',
  host text NOT NULL,
  port integer NOT NULL,
  username text NOT NULL DEFAULT '',
  password_sealed bytea,
  tls text NOT NULL CHECK (tls IN ('none', 'starttls', 'implicit')),
  sequence bigint NOT NULL,
  creation_date timestamptz NOT NULL,
  change_date timestamptz NOT NULL
);
