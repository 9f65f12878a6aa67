import type { Database } from '../storage/database.ts';
import { beginWrite, type Editor } from '../storage/event-log.ts';
import { addFailedPassword, expiredLocks, lockUser, resetFailedPasswords, unlockUser } from '../storage/lockout.ts';
import { checkPassword } from '../queries/authenticate-password.ts';
import { effectivePolicy } from '../queries/policies.ts';
import { LOCKOUT_POLICY } from '../domain/policies/lockout.ts';

export type LoginOutcome = { result: 'signed-in'; userId: string } | { result: 'wrong' } | { result: 'locked' };

/**
 * A password login under the lockout policy of the user's org: consecutive
 * failures are counted per user in the database (every node sees the same
 * count); reaching `maxPasswordAttempts` locks the user (`user.locked`). A
 * locked user gets `locked` whatever the password, so the answer says
 * nothing about it; a timed lock that has ended is lifted first
 * (`user.unlocked`). `onLockChange` hears of every lock and unlock (caches).
 */
export async function passwordLogin(db: Database, login: string, password: string, onLockChange: () => void = () => {}): Promise<LoginOutcome> {
  const { user, passwordOk } = await checkPassword(db, login, password);
  if (!user) return { result: 'wrong' };
  let state = user.state;
  if (state === 'locked' && (await expiredLocks(db, user.id)).length) {
    if (await unlockAt(db, user, 'expired')) onLockChange();
    state = 'active';
  }
  if (state === 'locked') return { result: 'locked' };
  if (passwordOk) return (await resetFailedPasswords(db, user.id)) ? { result: 'signed-in', userId: user.id } : { result: 'locked' };
  return { result: await countFailedPassword(db, user, onLockChange) };
}

/**
 * Counts a failed check against the user's lockout (a wrong password, or a
 * wrong code of the self-service pages, which counts the same); locks the
 * user on reaching `maxPasswordAttempts`. Answers whether it is locked now.
 */
export async function countFailedPassword(
  db: Database,
  user: { id: string; org_id: string },
  onLockChange: () => void = () => {},
): Promise<'wrong' | 'locked'> {
  const failures = await addFailedPassword(db, user.id);
  // Locked by a concurrent failure since the check began.
  if (failures === undefined) return 'locked';
  const policy = await effectivePolicy(db, LOCKOUT_POLICY, user.org_id);
  if (policy.maxPasswordAttempts === 0 || failures < policy.maxPasswordAttempts) return 'wrong';
  const locked = await db.transaction(async (tx) => lockUser(await beginWrite(tx, null), { id: user.id, orgId: user.org_id }, policy.lockoutDurationSeconds));
  if (locked) onLockChange();
  return 'locked';
}

function unlockAt(db: Database, user: { id: string; org_id: string }, reason: 'admin' | 'expired', actor: Editor | null = null): Promise<boolean> {
  return db.transaction(async (tx) => unlockUser(await beginWrite(tx, actor), { id: user.id, orgId: user.org_id }, reason));
}

/** Lifts the timed locks that have ended (`user.unlocked`); answers how many. Any node may run it: a lock is lifted once. */
export async function unlockExpiredLocks(db: Database): Promise<number> {
  let lifted = 0;
  for (const user of await expiredLocks(db)) if (await unlockAt(db, user, 'expired')) lifted++;
  return lifted;
}
