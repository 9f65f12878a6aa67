import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type Editor, type WriteDetails } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { lockUser } from '../storage/lockout.ts';
import { acceptStep, addFailedOtp, confirmOtp, findOtp, putPendingOtp, removeOtp, resetFailedOtp, spendRecoveryCode } from '../storage/otp.ts';
import { seal, unseal } from '../keys/sealing.ts';
import { secretDigest } from '../security/secrets.ts';
import { effectivePolicy } from '../queries/policies.ts';
import { LOCKOUT_POLICY } from '../domain/policies/lockout.ts';
import { looksLikeTotpCode, matchTotp, newRecoveryCodes, newTotpSecret, normaliseRecoveryCode } from '../domain/totp.ts';
import { AlreadyExists, NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from '../queries/get-user.ts';
import { userMayAct } from '../domain/may-act.ts';

/** The keys of second factors: `sealing` encrypts TOTP secrets at rest, `digest` keys the recovery codes' digests. */
export interface FactorKeys {
  sealing: Buffer;
  digest: Buffer;
}

// The sealed secret is bound to its user: copied onto another user's row it does not open.
const sealedFor = (userId: string) => `user_otp:${userId}`;

/** Starts a set-up: a new secret, stored unconfirmed, for the page to show. An already confirmed app must be removed first. */
export async function beginOtpSetup(db: Database, keys: FactorKeys, userId: string): Promise<Buffer> {
  const secret = newTotpSecret();
  if (!(await putPendingOtp(db, userId, seal(keys.sealing, secret, sealedFor(userId))))) throw new AlreadyExists('an authenticator app is already set up');
  return secret;
}

/** The secret of the set-up in progress, to show its page again; undefined when there is none. */
export async function pendingOtpSecret(db: Database, keys: FactorKeys, userId: string): Promise<Buffer | undefined> {
  const row = await findOtp(db, userId);
  return row && !row.ready ? unseal(keys.sealing, Buffer.from(row.secret), sealedFor(userId)) : undefined;
}

/**
 * Confirms the set-up with a valid code (`user.otp.added`) and answers the
 * ten recovery codes, which exist in clear only in this answer; undefined
 * when the code is wrong (nothing changes).
 */
export async function confirmOtpSetup(
  db: Database,
  keys: FactorKeys,
  actor: Editor,
  userId: string,
  code: string,
  now = Date.now(),
): Promise<string[] | undefined> {
  const secret = await pendingOtpSecret(db, keys, userId);
  if (!secret) throw new NotFound('no set-up in progress');
  const step = matchTotp(secret, code, now, null);
  if (step === undefined) return undefined;
  const codes = newRecoveryCodes();
  const confirmed = await db.transaction(async (tx) => {
    const user = await findUser(tx, userId);
    if (!user) throw new NotFound('user not found');
    return confirmOtp(
      await beginWrite(tx, actor),
      { id: user.id, orgId: user.org_id },
      step,
      codes.map((c) => secretDigest(keys.digest, c)),
    );
  });
  return confirmed ? codes : undefined;
}

export async function hasOtp(db: Database, userId: string): Promise<boolean> {
  return Boolean((await findOtp(db, userId))?.ready);
}

export type CodeOutcome = { result: 'ok'; method: 'otp' | 'recovery' } | { result: 'malformed' } | { result: 'wrong' } | { result: 'locked' };

/**
 * The second step of a login: a TOTP code of the window around now (a step
 * once accepted, and earlier ones, are refused) or an unused recovery code.
 * Wrong codes count towards the lockout policy's `maxOtpAttempts`; a
 * malformed one (not six digits, not a recovery code's shape) is refused
 * without counting or storing anything. `onLockChange` hears of a lock.
 */
export async function checkSecondFactor(
  db: Database,
  keys: FactorKeys,
  userId: string,
  input: string,
  onLockChange: () => void = () => {},
  now = Date.now(),
): Promise<CodeOutcome> {
  const code = input.replace(/\s/g, '');
  const recovery = normaliseRecoveryCode(code);
  const isRecovery = /^[a-z0-9]{5}-[a-z0-9]{5}$/.test(recovery);
  if (!looksLikeTotpCode(code) && !isRecovery) return { result: 'malformed' };
  const user = await findUser(db, userId);
  const otp = await findOtp(db, userId);
  if (!user || user.state === 'locked') return { result: 'locked' };
  if (!userMayAct(user) || !otp?.ready) return { result: 'wrong' };
  let accepted: CodeOutcome | undefined;
  if (isRecovery) {
    if (await spendRecoveryCode(db, userId, secretDigest(keys.digest, recovery))) accepted = { result: 'ok', method: 'recovery' };
  } else {
    const secret = unseal(keys.sealing, Buffer.from(otp.secret), sealedFor(userId));
    const step = matchTotp(secret, code, now, otp.last_step === null ? null : Number(otp.last_step));
    if (step !== undefined && (await acceptStep(db, userId, step))) accepted = { result: 'ok', method: 'otp' };
  }
  if (accepted) {
    await resetFailedOtp(db, userId);
    return accepted;
  }
  return { result: await countFailedOtp(db, user, onLockChange) };
}

/**
 * A wrong second-factor code of `user` (an app's, or one sent by mail or
 * SMS): counted towards the lockout policy's `maxOtpAttempts`, locking the
 * user at the limit; `onLockChange` hears of a lock.
 */
export async function countFailedOtp(db: Database, user: UserRow, onLockChange: () => void): Promise<'wrong' | 'locked'> {
  const failures = await addFailedOtp(db, user.id);
  if (failures === undefined) return 'locked';
  const policy = await effectivePolicy(db, LOCKOUT_POLICY, user.org_id);
  if (policy.maxOtpAttempts === 0 || failures < policy.maxOtpAttempts) return 'wrong';
  const locked = await db.transaction(async (tx) => lockUser(await beginWrite(tx, null), { id: user.id, orgId: user.org_id }, policy.lockoutDurationSeconds));
  if (locked) onLockChange();
  return 'locked';
}

/** A user removes their own authenticator app (the security page). */
export async function removeOwnOtp(db: Database, userId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const user = await findUser(tx, userId);
    return Boolean(user) && removeOtp(await beginWrite(tx, { userId }), { id: user!.id, orgId: user!.org_id });
  });
}

/** `DELETE /management/v1/users/{userId}/auth_factors/otp` (ORG_OWNER, ORG_USER_MANAGER holding every role of the user): `user.otp.removed`. */
export async function removeUserOtp(db: Database, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (!(await removeOtp(write, { id: user.id, orgId }))) throw new NotFound('the user has no authenticator app');
    return { details: writeDetails(write, orgId) };
  });
}
