import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { spendCodes } from '../storage/verification-codes.ts';
import { markEmailVerified, setPassword } from '../storage/self-service-changes.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { hashPassword } from '../security/passwords.ts';
import { passwordRulesBroken, type PasswordPolicy } from '../domain/password-policy.ts';
import { InvalidArgument, ResourceExhausted } from '../domain/errors.ts';
import { CODE_MESSAGE_WINDOW_SECONDS, type CodeCheck } from '../domain/verification-codes.ts';
import type { Principal } from '../domain/roles.ts';
import { humanByLoginName } from '../queries/authenticate-password.ts';
import { instancePasswordPolicy, orgPasswordPolicy } from '../queries/password-policy.ts';
import { userToActOn } from '../queries/get-user.ts';
import { countFailedPassword } from './password-login.ts';
import { endSessionsOf } from './end-user-sessions.ts';
import type { OrgSettings } from './setup-org.ts';
import { issueCode, matchCode, queueMail, type CodeSettings } from './verification-codes.ts';
import { channelVerified, resetChannel } from '../domain/code-factors.ts';

/** What the self-service commands use (docs/self-service.md). */
export interface SelfServiceDeps {
  db: Database;
  codes: CodeSettings;
  settings: OrgSettings;
  engine: EngineHolder;
  /** Tells every node's caches that users changed (a lock, a verified email). */
  announce: () => void;
}

/** A code-issuing call on a user that may not get one: not a human, not active (no code while locked). */
export function assertMayGetCode(user: UserRow): void {
  if (user.type !== 'human') throw new InvalidArgument('codes are for human users');
  if (user.state !== 'active') throw new InvalidArgument(`the user is ${user.state}; no code is issued until it is active again`);
}

export function tooManyMessages(): ResourceExhausted {
  return new ResourceExhausted('too many messages with codes for this user; try again later', CODE_MESSAGE_WINDOW_SECONDS);
}

/**
 * The complexity policy a new password breaks (that of the user's org), or
 * undefined. With no user found, the instance default answers, so an
 * unknown holder is told what a user of an org without an override would be.
 */
async function newPasswordProblem(
  deps: Pick<SelfServiceDeps, 'db' | 'settings'>,
  user: UserRow | undefined,
  password: string,
): Promise<PasswordPolicy | undefined> {
  const kind = deps.settings.passwordComplexity;
  const policy = user ? await orgPasswordPolicy(deps.db, kind, user.org_id) : await instancePasswordPolicy(deps.db, kind);
  return passwordRulesBroken(password, policy).length ? policy : undefined;
}

/**
 * "Forgot password?" on the login page: a reset code mailed to the active
 * human the login name means (sent by SMS when only its phone is verified). Nothing is said either way, so the page
 * answers the same for every name; over the message limit nothing is sent.
 */
export async function requestPasswordReset(deps: Pick<SelfServiceDeps, 'db' | 'codes'>, login: string): Promise<void> {
  const candidate = await humanByLoginName(deps.db, login);
  if (candidate?.state !== 'active') return;
  await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const user = await findUser(tx, candidate.id);
    if (user?.state === 'active' && (user.email || channelVerified(user, 'sms'))) await issueCode(write, deps.codes, user, 'reset', 'mail');
  });
}

export interface AdminResetInput {
  sendMail?: boolean;
  returnCode?: boolean;
}

/**
 * `POST /management/v1/users/{userId}/password/_reset`: a reset code,
 * mailed (`sendMail`) or answered for the caller's own delivery
 * (`returnCode`). Acting on the user's security state: the caller holds
 * every role of the user.
 */
export async function resetPasswordByAdmin(
  deps: Pick<SelfServiceDeps, 'db' | 'codes'>,
  actor: Principal,
  orgId: string,
  userId: string,
  input: AdminResetInput,
): Promise<{ details: WriteDetails; verificationCode?: string }> {
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    assertMayGetCode(user);
    const code = await issueCode(write, deps.codes, user, 'reset', input.returnCode ? 'return' : 'mail');
    if (code === undefined) throw tooManyMessages();
    return { details: writeDetails(write, orgId), ...(input.returnCode ? { verificationCode: code } : {}) };
  });
}

/** `POST /management/v1/users/{userId}/_resend_initialization`: a new invitation for a user who has not set its password yet. */
export async function resendInitialization(
  deps: Pick<SelfServiceDeps, 'db' | 'codes'>,
  actor: Principal,
  orgId: string,
  userId: string,
): Promise<{ details: WriteDetails }> {
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    assertMayGetCode(user);
    if (user.password_set) throw new InvalidArgument('the user has already set its password; send a password reset instead');
    if ((await issueCode(write, deps.codes, user, 'init', 'mail')) === undefined) throw tooManyMessages();
    return { details: writeDetails(write, orgId) };
  });
}

/** Who a code page means: the link's user id, or the login name typed on the login page. */
export type CodeHolder = { userId: string } | { loginName: string };

export type PasswordCodeOutcome =
  | { result: 'ok'; userId: string }
  | { result: Exclude<CodeCheck, 'ok'> | 'locked' }
  | { result: 'password'; policy: PasswordPolicy };

async function holderOf(deps: Pick<SelfServiceDeps, 'db'>, holder: CodeHolder): Promise<UserRow | undefined> {
  const id = 'userId' in holder ? holder.userId : (await humanByLoginName(deps.db, holder.loginName))?.id;
  const user = id ? await findUser(deps.db, id) : undefined;
  return user?.type === 'human' && user.state !== 'inactive' ? user : undefined;
}

/**
 * A password set with a code: an invitation's (`init`, which verifies the
 * email it was sent to) or a reset's (which ends the user's sessions and
 * mails `PasswordChanged`). Either clears the lockout count. The same answer
 * for an unknown user as for a wrong code; a wrong code counts towards the
 * user's lockout like a wrong password, and a locked user is told so
 * whatever the code (no oracle).
 */
export async function setPasswordWithCode(
  deps: SelfServiceDeps,
  purpose: 'init' | 'reset',
  holder: CodeHolder,
  code: string,
  password: string,
): Promise<PasswordCodeOutcome> {
  // Hashed first, whoever the holder is: the time taken tells no unknown login name from a known one.
  const passwordHash = await hashPassword(password);
  const user = await holderOf(deps, holder);
  // The page names the broken rules in its own language (src/pages/password-rules.ts).
  const policy = await newPasswordProblem(deps, user, password);
  if (policy) return { result: 'password', policy };
  if (!user) return { result: 'wrong' };
  if (user.state === 'locked') return { result: 'locked' };
  const ref = { id: user.id, orgId: user.org_id };
  const check = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, { userId: user.id });
    const found = await matchCode(tx, deps.codes, user.id, purpose, code, write.at);
    if (found !== 'ok') return found;
    await spendCodes(tx, user.id, purpose, write.at);
    await setPassword(write, ref, passwordHash, purpose);
    if (purpose === 'init' && !user.email_verified && user.email) await markEmailVerified(write, ref, user.email);
    if (purpose === 'reset') await queueMail(write, user, 'PasswordChanged', {}, resetChannel(user));
    return found;
  });
  if (check === 'wrong') return { result: await countFailedPassword(deps.db, user, deps.announce) };
  if (check !== 'ok') return { result: check };
  deps.announce();
  if (purpose === 'reset') await endSessionsOf(deps.db, deps.engine, user.id);
  return { result: 'ok', userId: user.id };
}
