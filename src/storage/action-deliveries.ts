import type { Queryable } from './database.ts';

// The delivery cursor of each target (docs/actions.md): the last event
// delivered, the failures at the next one, and the lease of the node that
// delivers for it now. Every change but the claim itself is made only while
// the caller still holds the lease, so a node whose lease ran out (it
// stalled, or another node took over after a crash) changes nothing.

export interface Cursor {
  targetId: string;
  sequence: string;
  failures: number;
  firstFailureAt: Date | null;
}

export interface DeliveryState {
  sequence: string;
  failures: number;
  lastError: string | null;
}

/** An event of the log as a delivery reads it. */
export interface LoggedEvent {
  position: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  resourceOwner: string;
  creator: string | null;
  payload: Record<string, unknown>;
  createdAt: Date;
}

interface CursorRow {
  target_id: string;
  sequence: string;
  failures: number;
  first_failure_at: Date | null;
}

/**
 * Claims every due target that has event executions, events it has not
 * looked at yet and no live lease of another node, for `leaseMs`: `FOR UPDATE SKIP LOCKED` lets nodes claiming
 * at once take different targets.
 */
export async function claimDueTargets(db: Queryable, owner: string, leaseMs: number): Promise<Cursor[]> {
  const { rows } = await db.query<CursorRow>(
    `UPDATE action_deliveries SET lease_owner = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000)
     WHERE target_id IN (
       SELECT d.target_id FROM action_deliveries d
       WHERE d.next_attempt_at <= now() AND (d.lease_owner IS NULL OR d.lease_owner = $1 OR d.lease_until < now())
         AND d.sequence < (SELECT coalesce(max(position), 0) FROM events)
         AND EXISTS (SELECT 1 FROM action_execution_targets x WHERE x.target_id = d.target_id AND x.condition_key NOT LIKE 'function:%')
       FOR UPDATE SKIP LOCKED)
     RETURNING target_id, sequence::text AS sequence, failures, first_failure_at`,
    [owner, leaseMs],
  );
  return rows.map((row) => ({
    targetId: row.target_id,
    sequence: row.sequence,
    failures: Number(row.failures),
    firstFailureAt: row.first_failure_at && new Date(row.first_failure_at),
  }));
}

/** Extends the lease before an attempt; false when this node no longer holds it. */
export async function renewLease(db: Queryable, targetId: string, owner: string, leaseMs: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE action_deliveries SET lease_until = now() + make_interval(secs => $3::double precision / 1000) WHERE target_id = $1 AND lease_owner = $2`,
    [targetId, owner, leaseMs],
  );
  return rowCount > 0;
}

export async function releaseLease(db: Queryable, targetId: string, owner: string): Promise<void> {
  await db.query('UPDATE action_deliveries SET lease_owner = NULL, lease_until = NULL WHERE target_id = $1 AND lease_owner = $2', [targetId, owner]);
}

interface EventRow {
  position: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  resource_owner: string;
  creator: string | null;
  payload: Record<string, unknown>;
  created_at: Date;
}

/**
 * The next events after `after` that an event execution of the target
 * matches (the exact type, a group as the type's first dotted parts, or
 * all), each only when written after the execution was set.
 */
export async function matchingEvents(db: Queryable, targetId: string, after: string, limit: number): Promise<LoggedEvent[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT e.position::text AS position, e.aggregate_type, e.aggregate_id, e.event_type, e.resource_owner, e.creator, e.payload, e.created_at
     FROM events e
     WHERE e.position > $2 AND EXISTS (
       SELECT 1 FROM action_execution_targets x WHERE x.target_id = $1 AND e.position > x.since_sequence AND (
         x.condition_key = 'all'
         OR x.condition_key = 'event:' || e.event_type
         OR (x.condition_key LIKE 'group:%' AND left(e.event_type || '.', length(x.condition_key) - 5) = substr(x.condition_key, 7) || '.')))
     ORDER BY e.position LIMIT $3`,
    [targetId, after, limit],
  );
  return rows.map((row) => ({
    position: row.position,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    eventType: row.event_type,
    resourceOwner: row.resource_owner,
    creator: row.creator,
    payload: row.payload,
    createdAt: new Date(row.created_at),
  }));
}

/** The log's last position now: a target with nothing to deliver up to it moves its cursor there. */
export async function lastPosition(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ position: string | null }>('SELECT max(position)::text AS position FROM events');
  return rows[0]?.position ?? '0';
}

/** Delivered (or nothing to deliver up to `sequence`): the cursor moves on and the failures are forgotten. */
export async function advanceCursor(db: Queryable, targetId: string, owner: string, sequence: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE action_deliveries SET sequence = $3, failures = 0, first_failure_at = NULL, last_error = NULL
     WHERE target_id = $1 AND lease_owner = $2 AND sequence < $3`,
    [targetId, owner, sequence],
  );
  return rowCount > 0;
}

/** A failed attempt at the next event: tried again after `delayMs`. */
export async function recordFailure(db: Queryable, targetId: string, owner: string, delayMs: number, error: string): Promise<void> {
  await db.query(
    `UPDATE action_deliveries SET failures = failures + 1, first_failure_at = coalesce(first_failure_at, now()), last_error = $4,
       next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
     WHERE target_id = $1 AND lease_owner = $2`,
    [targetId, owner, delayMs, error],
  );
}

/** Given up on one event after retrying long enough: kept for inspection, and the cursor moves past it. */
export async function giveUpEvent(db: Queryable, targetId: string, owner: string, sequence: string, attempts: number, error: string): Promise<boolean> {
  const { rows } = await db.query<{ target_id: string }>(
    `WITH moved AS (
       UPDATE action_deliveries SET sequence = $3, failures = 0, first_failure_at = NULL, last_error = $5
       WHERE target_id = $1 AND lease_owner = $2 AND sequence < $3 RETURNING target_id)
     INSERT INTO action_delivery_failures (target_id, sequence, attempts, last_error, failed_at)
     SELECT target_id, $3, $4, $5, now() FROM moved
     ON CONFLICT (target_id, sequence) DO NOTHING
     RETURNING target_id`,
    [targetId, owner, sequence, attempts, error],
  );
  return rows.length > 0;
}

export async function deliveryState(db: Queryable, targetId: string): Promise<DeliveryState | undefined> {
  const { rows } = await db.query<{ sequence: string; failures: number; last_error: string | null }>(
    'SELECT sequence::text AS sequence, failures, last_error FROM action_deliveries WHERE target_id = $1',
    [targetId],
  );
  const row = rows[0];
  return row && { sequence: row.sequence, failures: Number(row.failures), lastError: row.last_error };
}
