import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// A user's authenticator app and recovery codes (migration 0020). The secret
// arrives sealed and the codes as digests: nothing here sees them in clear.
// Accepting a step and spending a recovery code are single atomic statements,
// so two nodes given the same code accept it once.

export interface OtpRow {
  secret: Uint8Array;
  ready: boolean;
  last_step: string | null;
}

export async function findOtp(db: Queryable, userId: string): Promise<OtpRow | undefined> {
  const { rows } = await db.query<OtpRow>('SELECT secret, ready, last_step FROM user_otp WHERE user_id = $1', [userId]);
  return rows[0];
}

/** Stores a new, unconfirmed secret, replacing an unconfirmed one; false when the user already has a confirmed app. */
export async function putPendingOtp(db: Queryable, userId: string, sealed: Buffer): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO user_otp (user_id, secret) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, last_step = NULL, created_at = now() WHERE NOT user_otp.ready`,
    [userId, sealed],
  );
  return rowCount === 1;
}

/** Confirms the app (`user.otp.added`) with its first accepted step, and replaces the recovery codes. */
export async function confirmOtp(write: Write, user: { id: string; orgId: string }, step: number, recoveryDigests: Buffer[]): Promise<boolean> {
  const { rowCount } = await write.tx.query('UPDATE user_otp SET ready = true, last_step = $2 WHERE user_id = $1 AND NOT ready', [user.id, step]);
  if (rowCount !== 1) return false;
  await write.tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [user.id]);
  for (const digest of recoveryDigests) await write.tx.query('INSERT INTO user_recovery_codes (user_id, digest) VALUES ($1, $2)', [user.id, digest]);
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.otp.added', resourceOwner: user.orgId });
  return true;
}

/** Removes the app and its recovery codes (`user.otp.removed`); false when there was no confirmed app. */
export async function removeOtp(write: Write, user: { id: string; orgId: string }): Promise<boolean> {
  const { rowCount } = await write.tx.query('DELETE FROM user_otp WHERE user_id = $1 AND ready', [user.id]);
  if (rowCount !== 1) return false;
  await write.tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [user.id]);
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.otp.removed', resourceOwner: user.orgId });
  return true;
}

/** Accepts time step `step` unless it or a later one was accepted before (no replay). */
export async function acceptStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE user_otp SET last_step = $2 WHERE user_id = $1 AND ready AND (last_step IS NULL OR last_step < $2)', [
    userId,
    step,
  ]);
  return rowCount === 1;
}

/** Spends a recovery code: true once per code. */
export async function spendRecoveryCode(db: Queryable, userId: string, digest: Buffer): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM user_recovery_codes WHERE user_id = $1 AND digest = $2', [userId, digest]);
  return rowCount === 1;
}

export async function recoveryCodesLeft(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = $1', [userId]);
  return rows[0]!.n;
}

/** Adds a wrong code of an active user; the consecutive wrong codes so far, undefined when the user is no longer active. */
export async function addFailedOtp(db: Queryable, userId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ failed: number }>(
    "UPDATE users SET failed_otp_attempts = failed_otp_attempts + 1 WHERE id = $1 AND state = 'active' RETURNING failed_otp_attempts AS failed",
    [userId],
  );
  return rows[0]?.failed;
}

export async function resetFailedOtp(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE users SET failed_otp_attempts = 0 WHERE id = $1 AND failed_otp_attempts <> 0', [userId]);
}
