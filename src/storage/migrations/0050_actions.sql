-- Actions (docs/actions.md): targets the service calls, executions saying
-- which events or token hooks call them, and one delivery cursor per
-- target. The signing key is sealed with a key derived from the master key,
-- bound to its target.
CREATE TABLE action_targets (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  endpoint text NOT NULL,
  timeout_ms integer NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('restWebhook', 'restCall', 'restAsync')),
  interrupt_on_error boolean NOT NULL DEFAULT false,
  signing_key_sealed bytea NOT NULL,
  sequence bigint NOT NULL,
  creation_date timestamptz NOT NULL,
  change_date timestamptz NOT NULL
);

-- One row per target of an execution. `condition_key` names the condition
-- (`event:user.human.added`, `group:user`, `all`, `function:preuserinfo`);
-- `since_sequence` is the position of the event that set the execution:
-- only events after it are delivered to this target.
CREATE TABLE action_execution_targets (
  condition_key text NOT NULL,
  target_id text NOT NULL REFERENCES action_targets (id) ON DELETE CASCADE,
  position integer NOT NULL,
  since_sequence bigint NOT NULL,
  PRIMARY KEY (condition_key, target_id)
);
CREATE INDEX action_execution_targets_target ON action_execution_targets (target_id);

-- The executions themselves, for their details on read.
CREATE TABLE action_executions (
  condition_key text PRIMARY KEY,
  sequence bigint NOT NULL,
  creation_date timestamptz NOT NULL,
  change_date timestamptz NOT NULL
);

-- Where each target's event deliveries stand: `sequence` is the last event
-- delivered (or given up); `failures` the failed attempts at the next one.
-- A node delivers for a target only while it holds the lease.
CREATE TABLE action_deliveries (
  target_id text PRIMARY KEY REFERENCES action_targets (id) ON DELETE CASCADE,
  sequence bigint NOT NULL,
  failures integer NOT NULL DEFAULT 0,
  first_failure_at timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  lease_owner text,
  lease_until timestamptz
);

-- Events given up after retrying for the configured time, for inspection.
CREATE TABLE action_delivery_failures (
  target_id text NOT NULL REFERENCES action_targets (id) ON DELETE CASCADE,
  sequence bigint NOT NULL,
  attempts integer NOT NULL,
  last_error text NOT NULL,
  failed_at timestamptz NOT NULL,
  PRIMARY KEY (target_id, sequence)
);
