import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import type { NewHuman } from './users.ts';

// Changes to an existing user's row, each with its event in the caller's
// write: profile, login name, phone and the active/inactive state.

export type Profile = Pick<NewHuman, 'firstName' | 'lastName' | 'nickName' | 'displayName' | 'preferredLanguage' | 'gender'>;

type UserRef = { id: string; orgId: string };

export async function changeProfile(write: Write, user: UserRef, profile: Profile): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.profile.changed',
    resourceOwner: user.orgId,
    payload: { ...profile },
  });
  await write.tx.query(
    `UPDATE users SET first_name = $2, last_name = $3, nick_name = $4, display_name = $5, preferred_language = $6, gender = $7,
                      sequence = $8, change_date = $9 WHERE id = $1`,
    [user.id, profile.firstName, profile.lastName, profile.nickName, profile.displayName, profile.preferredLanguage, profile.gender, sequence, write.at],
  );
}

/** Whether another user of the org already has this login name (letter case ignored, as the unique index does). */
export async function userNameTakenByOther(db: Queryable, orgId: string, userName: string, userId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM users WHERE org_id = $1 AND lower(user_name) = lower($2) AND id <> $3', [orgId, userName, userId]);
  return rows.length > 0;
}

export async function changeUserName(write: Write, user: UserRef & { oldUserName: string }, userName: string): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.username.changed',
    resourceOwner: user.orgId,
    payload: { userName, oldUserName: user.oldUserName },
  });
  await write.tx.query('UPDATE users SET user_name = $2, sequence = $3, change_date = $4 WHERE id = $1', [user.id, userName, sequence, write.at]);
}

export async function changePhone(write: Write, user: UserRef, phone: { phone: string; verified: boolean }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.phone.changed',
    resourceOwner: user.orgId,
    payload: { phone: phone.phone, isPhoneVerified: phone.verified },
  });
  await write.tx.query('UPDATE users SET phone = $2, phone_verified = $3, sequence = $4, change_date = $5 WHERE id = $1', [
    user.id,
    phone.phone,
    phone.verified,
    sequence,
    write.at,
  ]);
}

/**
 * Deactivates an active or locked user (`user.deactivated`); false when it
 * was already inactive. A lock ends with it: reactivating starts afresh.
 */
export async function deactivateUser(write: Write, user: UserRef): Promise<boolean> {
  const { rows } = await write.tx.query<{ state: string }>('SELECT state FROM users WHERE id = $1 FOR UPDATE', [user.id]);
  if (!rows[0] || rows[0].state === 'inactive') return false;
  const sequence = await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.deactivated', resourceOwner: user.orgId, payload: {} });
  await write.tx.query("UPDATE users SET state = 'inactive', locked_until = NULL, sequence = $2, change_date = $3 WHERE id = $1", [
    user.id,
    sequence,
    write.at,
  ]);
  return true;
}

/** Reactivates an inactive user (`user.reactivated`) with its failure counts cleared; false when it was not inactive. */
export async function reactivateUser(write: Write, user: UserRef): Promise<boolean> {
  const { rows } = await write.tx.query<{ state: string }>('SELECT state FROM users WHERE id = $1 FOR UPDATE', [user.id]);
  if (rows[0]?.state !== 'inactive') return false;
  const sequence = await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.reactivated', resourceOwner: user.orgId, payload: {} });
  await write.tx.query(
    "UPDATE users SET state = 'active', failed_password_attempts = 0, failed_otp_attempts = 0, sequence = $2, change_date = $3 WHERE id = $1",
    [user.id, sequence, write.at],
  );
  return true;
}

/** A new password hash (`user.human.password.changed`; the event carries no hash). */
export async function changePassword(write: Write, user: UserRef, passwordHash: string): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.password.changed',
    resourceOwner: user.orgId,
    payload: {},
  });
  await write.tx.query('UPDATE users SET password_hash = $2, password_changed_at = $4, sequence = $3, change_date = $4 WHERE id = $1', [
    user.id,
    passwordHash,
    sequence,
    write.at,
  ]);
}
