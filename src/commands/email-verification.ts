import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import { findUser } from '../storage/users.ts';
import { dropCodes, spendCodes } from '../storage/verification-codes.ts';
import { changeEmail, markEmailVerified } from '../storage/self-service-changes.ts';
import { InvalidArgument } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import type { CodeCheck } from '../domain/verification-codes.ts';
import { userToActOn } from '../queries/get-user.ts';
import { countFailedPassword } from './password-login.ts';
import { assertMayGetCode, tooManyMessages, type SelfServiceDeps } from './password-codes.ts';
import type { HumanInput } from './setup-org.ts';
import { issueCode, matchCode, type CodeSettings } from './verification-codes.ts';

type Deps = Pick<SelfServiceDeps, 'db' | 'codes' | 'announce'>;

/**
 * The first mail of a new human, in the write that adds it: an invitation
 * when it has no password (the invitation verifies the email, so no
 * `VerifyEmail` besides), else `VerifyEmail` unless the address was given
 * as verified.
 */
export async function welcomeMail(write: Write, codes: CodeSettings, userId: string, human: HumanInput): Promise<void> {
  const user = await findUser(write.tx, userId);
  if (!user) return;
  if (human.password === undefined) await issueCode(write, codes, user, 'init', 'mail');
  else if (!human.email.isEmailVerified) await issueCode(write, codes, user, 'email', 'mail');
}

/** `POST /management/v1/users/{userId}/email/_resend_verification`. */
export async function resendEmailVerification(deps: Deps, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    assertMayGetCode(user);
    if (user.email_verified) throw new InvalidArgument('the email address is already verified');
    if ((await issueCode(write, deps.codes, user, 'email', 'mail')) === undefined) throw tooManyMessages();
    return { details: writeDetails(write, orgId) };
  });
}

export interface EmailInput {
  email: string;
  isEmailVerified?: boolean;
}

/**
 * `PUT /management/v1/users/{userId}/email`: a new address, unverified
 * (and sent `VerifyEmail`) unless given as verified; the codes sent to the
 * old address no longer verify anything.
 */
export async function changeEmailByAdmin(deps: Deps, actor: Principal, orgId: string, userId: string, input: EmailInput): Promise<{ details: WriteDetails }> {
  const result = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (user.type !== 'human') throw new InvalidArgument('an email address is for human users');
    const verified = input.isEmailVerified ?? false;
    await dropCodes(tx, user.id, 'email');
    await changeEmail(write, { id: user.id, orgId }, input.email, verified);
    const changed = await findUser(tx, user.id);
    // Over the message limit the address still changes; the user asks for another code later.
    if (!verified && changed?.state === 'active') await issueCode(write, deps.codes, changed, 'email', 'mail');
    return { details: writeDetails(write, orgId) };
  });
  // ID tokens and userinfo read email and email_verified from the user cache.
  deps.announce();
  return result;
}

/**
 * The login's stop at the verification page (and its "send again"): a code
 * for the user's address, unless the message limit is reached; the page
 * says the same in either case.
 */
export async function mailVerificationCode(deps: Pick<Deps, 'db' | 'codes'>, userId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const user = await findUser(tx, userId);
    if (user?.state === 'active' && !user.email_verified) await issueCode(write, deps.codes, user, 'email', 'mail');
  });
}

export type EmailCodeOutcome = { result: 'ok'; userId: string } | { result: Exclude<CodeCheck, 'ok'> | 'locked' };

/**
 * `/ui/login/mail/verification`: the user's address verified with a code
 * (`user.human.email.verified`). An unknown user answers as a wrong code; a
 * wrong code counts towards the lockout like a wrong password.
 */
export async function verifyEmailWithCode(deps: Deps, userId: string, code: string): Promise<EmailCodeOutcome> {
  const user = await findUser(deps.db, userId);
  if (user?.type !== 'human' || user.state === 'inactive') return { result: 'wrong' };
  if (user.state === 'locked') return { result: 'locked' };
  const check = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, { userId: user.id });
    const found = await matchCode(tx, deps.codes, user.id, 'email', code, write.at);
    if (found !== 'ok') return found;
    await spendCodes(tx, user.id, 'email', write.at);
    if (!user.email_verified) await markEmailVerified(write, { id: user.id, orgId: user.org_id }, user.email ?? '');
    return found;
  });
  if (check === 'wrong') return { result: await countFailedPassword(deps.db, user, deps.announce) };
  if (check !== 'ok') return { result: check };
  deps.announce();
  return { result: 'ok', userId: user.id };
}
