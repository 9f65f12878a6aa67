import type { Write } from './event-log.ts';

// What the self-service flows change on a user's row, each with its event
// in the caller's write: a password set from a code, the email address and
// its verification.

type UserRef = { id: string; orgId: string };

/** A new password (`user.human.password.changed`); a new password starts the lockout count again. */
export async function setPassword(write: Write, user: UserRef, passwordHash: string, reason: 'init' | 'reset'): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.password.changed',
    resourceOwner: user.orgId,
    payload: { reason },
  });
  await write.tx.query(
    'UPDATE users SET password_hash = $2, password_changed_at = $4, failed_password_attempts = 0, sequence = $3, change_date = $4 WHERE id = $1',
    [user.id, passwordHash, sequence, write.at],
  );
}

/** `user.human.email.verified`. */
export async function markEmailVerified(write: Write, user: UserRef, email: string): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.email.verified',
    resourceOwner: user.orgId,
    payload: { email },
  });
  await write.tx.query('UPDATE users SET email_verified = true, sequence = $2, change_date = $3 WHERE id = $1', [user.id, sequence, write.at]);
}

/** `user.human.phone.verified`: the number a code was sent to belongs to the user. */
export async function markPhoneVerified(write: Write, user: UserRef, phone: string): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.phone.verified',
    resourceOwner: user.orgId,
    payload: { phone },
  });
  await write.tx.query('UPDATE users SET phone_verified = true, sequence = $2, change_date = $3 WHERE id = $1', [user.id, sequence, write.at]);
}

/** `user.human.email.changed`, and `user.human.email.verified` when the new address is given as verified. */
export async function changeEmail(write: Write, user: UserRef, email: string, verified: boolean): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.email.changed',
    resourceOwner: user.orgId,
    payload: { email },
  });
  await write.tx.query('UPDATE users SET email = $2, email_verified = false, sequence = $3, change_date = $4 WHERE id = $1', [
    user.id,
    email,
    sequence,
    write.at,
  ]);
  if (verified) await markEmailVerified(write, user, email);
}
