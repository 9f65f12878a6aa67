import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { addCodeFactor, removeCodeFactor } from '../storage/code-factors.ts';
import { CODE_FACTOR_PURPOSES as PURPOSES, type CodeChannel, channelVerified } from '../domain/code-factors.ts';
import { openCodeSent, spendCodes } from '../storage/verification-codes.ts';
import { resetFailedOtp } from '../storage/otp.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { normaliseCode, type CodeCheck } from '../domain/verification-codes.ts';
import { userMayAct } from '../domain/may-act.ts';
import { userToActOn } from '../queries/get-user.ts';
import { countFailedOtp } from './otp.ts';
import { issueCode, matchCode, type CodeSettings } from './verification-codes.ts';

// One-time codes sent by mail (`OtpEmail`) or SMS (`OtpSms`) as second
// factors (docs/security.md, Second factors): a code lives 5 minutes, is
// used once, and a wrong one counts towards the lockout policy's
// `maxOtpAttempts` like a wrong authenticator code.

interface Deps {
  db: Database;
  codes: CodeSettings;
  /** Tells every node's caches that users changed (a code locked a user). */
  announce: () => void;
}

/**
 * Sends a sign-in code to an active user's verified address or number. Unless
 * `again` (the page's "send again"), a code already out and open is enough:
 * a page shown once more sends nothing. Over the message limit nothing is
 * sent and nothing is said, as for the other codes.
 */
export async function sendFactorCode(deps: Pick<Deps, 'db' | 'codes'>, userId: string, channel: CodeChannel, again: boolean): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const user = await findUser(tx, userId);
    if (!userMayAct(user) || !channelVerified(user, channel)) return;
    if (!again && (await openCodeSent(tx, user.id, PURPOSES[channel], write.at))) return;
    await issueCode(write, deps.codes, user, PURPOSES[channel], 'mail');
  });
}

export type FactorCodeOutcome = 'ok' | 'malformed' | 'locked' | Exclude<CodeCheck, 'ok'>;

/**
 * Uses a sent code of `userId`: `then` runs in the same write once the code
 * matched (a set-up adds the factor there). What cannot be a code is a
 * typing slip (`malformed`, not counted); a locked user is told so whatever
 * the code (no oracle).
 */
async function useCode(
  deps: Deps,
  userId: string,
  channel: CodeChannel,
  input: string,
  then: (write: Write, user: UserRow) => Promise<void>,
): Promise<FactorCodeOutcome> {
  const code = normaliseCode(input);
  if (!code) return 'malformed';
  const user = await findUser(deps.db, userId);
  if (!user || user.state === 'locked') return 'locked';
  if (!userMayAct(user) || !channelVerified(user, channel)) return 'wrong';
  const check = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, { userId: user.id });
    const found = await matchCode(tx, deps.codes, user.id, PURPOSES[channel], code, write.at);
    if (found !== 'ok') return found;
    await spendCodes(tx, user.id, PURPOSES[channel], write.at);
    await resetFailedOtp(tx, user.id);
    await then(write, user);
    return found;
  });
  return check === 'wrong' ? countFailedOtp(deps.db, user, deps.announce) : check;
}

/** The second step of a login: the code sent to the user. */
export function checkFactorCode(deps: Deps, userId: string, channel: CodeChannel, input: string): Promise<FactorCodeOutcome> {
  return useCode(deps, userId, channel, input, async () => {});
}

/** Confirms the set-up with the code sent for it (`user.human.otp.email.added` / `…sms.added`). */
export function confirmCodeFactor(deps: Deps, userId: string, channel: CodeChannel, input: string): Promise<FactorCodeOutcome> {
  return useCode(deps, userId, channel, input, async (write, user) => {
    await addCodeFactor(write, { id: user.id, orgId: user.org_id }, channel);
  });
}

/** A user removes their own factor (the security page). */
export async function removeOwnCodeFactor(db: Database, userId: string, channel: CodeChannel): Promise<boolean> {
  return db.transaction(async (tx) => {
    const user = await findUser(tx, userId);
    return Boolean(user) && removeCodeFactor(await beginWrite(tx, { userId }), { id: user!.id, orgId: user!.org_id }, channel);
  });
}

/**
 * `DELETE /management/v1/users/{userId}/auth_factors/otp_email` and `…/otp_sms`
 * (ORG_OWNER, ORG_USER_MANAGER holding every role of the user).
 */
export async function removeUserCodeFactor(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  channel: CodeChannel,
): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (!(await removeCodeFactor(write, { id: user.id, orgId }, channel)))
      throw new NotFound(`the user has no one-time codes by ${channel === 'email' ? 'email' : 'SMS'}`);
    return { details: writeDetails(write, orgId) };
  });
}
