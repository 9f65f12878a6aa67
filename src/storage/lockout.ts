import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// The lockout state of users (migration 0008). Counting is one atomic
// UPDATE, so every node counts the same consecutive failures; lock and
// unlock are writes with their events.

/** Adds a failed password check of an active user and answers the consecutive failures so far; undefined when the user is no longer active. */
export async function addFailedPassword(db: Queryable, userId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ failed: number }>(
    "UPDATE users SET failed_password_attempts = failed_password_attempts + 1 WHERE id = $1 AND state = 'active' RETURNING failed_password_attempts AS failed",
    [userId],
  );
  return rows[0]?.failed;
}

/**
 * A successful check starts the count again (no write when there was
 * nothing to reset). Answers whether the user is still active: a lock by a
 * concurrent failure wins over a check that began before it.
 */
export async function resetFailedPasswords(db: Queryable, userId: string): Promise<boolean> {
  const { rows } = await db.query<{ state: string }>(
    `WITH reset AS (UPDATE users SET failed_password_attempts = 0 WHERE id = $1 AND state = 'active' AND failed_password_attempts <> 0)
     SELECT state FROM users WHERE id = $1`,
    [userId],
  );
  return rows[0]?.state === 'active';
}

/** Locks an active user (`user.locked`); false when it was not active (another node locked it first). */
export async function lockUser(write: Write, user: { id: string; orgId: string }, durationSeconds: number): Promise<boolean> {
  const { rows } = await write.tx.query<{ state: string }>('SELECT state FROM users WHERE id = $1 FOR UPDATE', [user.id]);
  if (rows[0]?.state !== 'active') return false;
  const lockedUntil = durationSeconds > 0 ? new Date(write.at.getTime() + durationSeconds * 1000) : null;
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.locked',
    resourceOwner: user.orgId,
    payload: { lockedUntil: lockedUntil?.toISOString() ?? null },
  });
  await write.tx.query("UPDATE users SET state = 'locked', locked_until = $2, sequence = $3, change_date = $4 WHERE id = $1", [
    user.id,
    lockedUntil,
    sequence,
    write.at,
  ]);
  return true;
}

/** Unlocks a locked user (`user.unlocked`) and clears its count; false when it was not locked. */
export async function unlockUser(write: Write, user: { id: string; orgId: string }, reason: 'admin' | 'expired'): Promise<boolean> {
  const { rows } = await write.tx.query<{ state: string }>('SELECT state FROM users WHERE id = $1 FOR UPDATE', [user.id]);
  if (rows[0]?.state !== 'locked') return false;
  const sequence = await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.unlocked', resourceOwner: user.orgId, payload: { reason } });
  await write.tx.query(
    "UPDATE users SET state = 'active', locked_until = NULL, failed_password_attempts = 0, failed_otp_attempts = 0, sequence = $2, change_date = $3 WHERE id = $1",
    [user.id, sequence, write.at],
  );
  return true;
}

/** Users whose timed lock has ended (by the database's clock). */
export async function expiredLocks(db: Queryable, userId?: string): Promise<Array<{ id: string; org_id: string }>> {
  const { rows } = await db.query<{ id: string; org_id: string }>(
    `SELECT id, org_id FROM users WHERE state = 'locked' AND locked_until <= now() ${userId === undefined ? 'LIMIT 100' : 'AND id = $1'}`,
    userId === undefined ? [] : [userId],
  );
  return rows;
}
