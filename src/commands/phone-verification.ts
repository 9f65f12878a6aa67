import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser } from '../storage/users.ts';
import { dropCodes, spendCodes } from '../storage/verification-codes.ts';
import { changePhone } from '../storage/user-changes.ts';
import { markPhoneVerified } from '../storage/self-service-changes.ts';
import { InvalidArgument } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { userToActOn } from '../queries/get-user.ts';
import { countFailedPassword } from './password-login.ts';
import { assertMayGetCode, tooManyMessages, type SelfServiceDeps } from './password-codes.ts';
import type { EmailCodeOutcome } from './email-verification.ts';
import { issueCode, matchCode } from './verification-codes.ts';

// Phone verification by SMS (docs/self-service.md): the twin of the email's,
// a `VerifyPhone` code sent through the SMS relay and typed on the security page.

type Deps = Pick<SelfServiceDeps, 'db' | 'codes' | 'announce'>;

export interface PhoneInput {
  phone: string;
  isPhoneVerified?: boolean;
}

/**
 * `PUT /management/v1/users/{userId}/phone`: a new number, unverified (and
 * sent `VerifyPhone`) unless given as verified; the codes sent to the old
 * number no longer verify anything. Changing it is acting on the user's
 * security state (codes by SMS go there).
 */
export async function changePhoneByAdmin(deps: Deps, actor: Principal, orgId: string, userId: string, input: PhoneInput): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const result = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (user.type !== 'human') throw new InvalidArgument('a phone number is for human users');
    const verified = input.isPhoneVerified ?? false;
    await dropCodes(tx, user.id, 'phone');
    await dropCodes(tx, user.id, 'otp_sms');
    await changePhone(write, { id: user.id, orgId }, { phone: input.phone, verified });
    const changed = await findUser(tx, user.id);
    // Over the message limit the number still changes; the user asks for another code later.
    if (!verified && changed?.state === 'active') await issueCode(write, deps.codes, changed, 'phone', 'mail');
    return { details: writeDetails(write, orgId) };
  });
  // ID tokens and userinfo read phone_number_verified from the user cache.
  deps.announce();
  return result;
}

/** `POST /management/v1/users/{userId}/phone/_resend_verification`. */
export async function resendPhoneVerification(deps: Deps, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    assertMayGetCode(user);
    if (!user.phone) throw new InvalidArgument('the user has no phone number');
    if (user.phone_verified) throw new InvalidArgument('the phone number is already verified');
    if ((await issueCode(write, deps.codes, user, 'phone', 'mail')) === undefined) throw tooManyMessages();
    return { details: writeDetails(write, orgId) };
  });
}

/** The security page's "send a code": one for the user's unverified number, unless the message limit is reached (the page says the same). */
export async function smsPhoneCode(deps: Pick<Deps, 'db' | 'codes'>, userId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const user = await findUser(tx, userId);
    if (user?.state === 'active' && user.phone && !user.phone_verified) await issueCode(write, deps.codes, user, 'phone', 'mail');
  });
}

/**
 * The security page: the user's number verified with the code sent to it
 * (`user.human.phone.verified`). A wrong code counts towards the lockout like
 * a wrong password, as the email's does.
 */
export async function verifyPhoneWithCode(deps: Deps, userId: string, code: string): Promise<EmailCodeOutcome> {
  const user = await findUser(deps.db, userId);
  if (user?.type !== 'human' || user.state === 'inactive' || !user.phone) return { result: 'wrong' };
  if (user.state === 'locked') return { result: 'locked' };
  const check = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, { userId: user.id });
    const found = await matchCode(tx, deps.codes, user.id, 'phone', code, write.at);
    if (found !== 'ok') return found;
    await spendCodes(tx, user.id, 'phone', write.at);
    if (!user.phone_verified) await markPhoneVerified(write, { id: user.id, orgId: user.org_id }, user.phone ?? '');
    return found;
  });
  if (check === 'wrong') return { result: await countFailedPassword(deps.db, user, deps.announce) };
  if (check !== 'ok') return { result: check };
  deps.announce();
  return { result: 'ok', userId: user.id };
}
