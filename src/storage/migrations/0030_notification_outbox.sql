-- Messages to send (docs/operations.md, "Mail"): written in the transaction
-- of the event that causes them, sent by a worker on any node. `values`
-- holds the placeholders, a code or link among them: it is needed until the
-- message is sent and cleared once it is sent or given up.
CREATE TABLE notification_outbox (
  id bigserial PRIMARY KEY,
  message_type text NOT NULL,
  recipient text NOT NULL,
  language text NOT NULL,
  "values" jsonb,
  user_id text NOT NULL,
  org_id text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at) WHERE state = 'pending';
