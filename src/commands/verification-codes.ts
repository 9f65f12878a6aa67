import type { Queryable } from '../storage/database.ts';
import type { Write } from '../storage/event-log.ts';
import type { UserRow } from '../storage/users.ts';
import { enqueueMessage, type MessageChannel, type MessageType, type MessageValues } from '../storage/outbox.ts';
import { codesOf, deleteSpentCodes, insertCode, mailedSince } from '../storage/verification-codes.ts';
import { digestsEqual, secretDigest } from '../security/secrets.ts';
import {
  CODE_MESSAGE_LIMIT,
  CODE_MESSAGE_WINDOW_SECONDS,
  codeDigestInput,
  newCodes,
  stateOfMatch,
  type CodeCheck,
  type CodePurpose,
} from '../domain/verification-codes.ts';
import { loginName } from '../domain/users.ts';
import { resetChannel } from '../domain/code-factors.ts';
import { mailLanguage } from '../pages/mail-render.ts';
import { INTERACTION_PATH } from '../engine/routes.ts';

/** What issuing and checking codes needs: the key of their digests and the issuer the links point to. */
export interface CodeSettings {
  key: Buffer;
  issuer: string;
}

/** The page each purpose's link opens (docs/self-service.md); a purpose without one sends its typed code only. */
export const CODE_PAGES = {
  init: `${INTERACTION_PATH}/user/init`,
  email: `${INTERACTION_PATH}/mail/verification`,
  reset: `${INTERACTION_PATH}/password/init`,
} as const satisfies Partial<Record<CodePurpose, string>>;
const LINK_PAGES: Partial<Record<CodePurpose, string>> = CODE_PAGES;

const MESSAGES: Record<CodePurpose, MessageType> = {
  init: 'InitCode',
  email: 'VerifyEmail',
  reset: 'PasswordReset',
  phone: 'VerifyPhone',
  otp_email: 'OtpEmail',
  otp_sms: 'OtpSms',
};
/** The purposes whose message is an SMS to the user's phone; the others are mails. */
const BY_SMS: ReadonlySet<CodePurpose> = new Set(['phone', 'otp_sms']);
const EVENTS: Record<CodePurpose, string> = {
  init: 'user.human.initialization.code.added',
  email: 'user.human.email.code.added',
  reset: 'user.human.password.code.added',
  phone: 'user.human.phone.code.added',
  otp_email: 'user.human.otp.email.code.added',
  otp_sms: 'user.human.otp.sms.code.added',
};

function digestOf(settings: CodeSettings, purpose: CodePurpose, userId: string, code: string): Buffer {
  return secretDigest(settings.key, codeDigestInput(purpose, userId, code));
}

/** Queues a mail (or an SMS to the user's phone) in the caller's write, in the user's language, with its name and org filled in. */
export async function queueMail(write: Write, user: UserRow, type: MessageType, values: MessageValues = {}, channel: MessageChannel = 'email'): Promise<void> {
  await enqueueMessage(write, {
    type,
    channel,
    recipient: (channel === 'sms' ? user.phone : user.email) ?? '',
    language: mailLanguage(user.preferred_language ?? undefined),
    values: { UserName: loginName(user.user_name, user.primary_domain), FirstName: user.first_name ?? '', OrgName: user.org_name, ...values },
    userId: user.id,
    orgId: user.org_id,
  });
}

/**
 * A new code for `user` in the caller's write, with its event. `mail`: sent
 * in the purpose's message (an SMS for a phone's purposes), unless the user already had
 * `CODE_MESSAGE_LIMIT` such messages within the window, when nothing is
 * written and undefined is answered. `return`: for the caller to deliver
 * (the admin API's `returnCode`), answered and not mailed.
 */
export async function issueCode(
  write: Write,
  settings: CodeSettings,
  user: UserRow,
  purpose: CodePurpose,
  delivery: 'mail' | 'return',
): Promise<string | undefined> {
  const windowStart = new Date(write.at.getTime() - CODE_MESSAGE_WINDOW_SECONDS * 1000);
  if (delivery === 'mail' && (await mailedSince(write.tx, user.id, purpose, windowStart)) >= CODE_MESSAGE_LIMIT) return undefined;
  await deleteSpentCodes(write.tx, user.id, purpose, windowStart, write.at);
  const codes = newCodes(purpose, write.at);
  await insertCode(write.tx, {
    userId: user.id,
    purpose,
    typedDigest: digestOf(settings, purpose, user.id, codes.typed),
    linkDigest: digestOf(settings, purpose, user.id, codes.link),
    mailed: delivery === 'mail',
    createdAt: write.at,
    expiresAt: codes.expiresAt,
  });
  await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: EVENTS[purpose],
    resourceOwner: user.org_id,
    payload: { messageSent: delivery === 'mail', expiresAt: codes.expiresAt.toISOString() },
  });
  if (delivery === 'mail') {
    const page = LINK_PAGES[purpose];
    const url = page ? new URL(page, settings.issuer) : undefined;
    url?.searchParams.set('userID', user.id);
    url?.searchParams.set('code', codes.link);
    const channel = BY_SMS.has(purpose) ? 'sms' : purpose === 'reset' ? resetChannel(user) : 'email';
    await queueMail(write, user, MESSAGES[purpose], { Code: codes.typed, ...(url ? { URL: url.href } : {}) }, channel);
  }
  return codes.typed;
}

/**
 * Whether `code` (normalised) is a live code of the user for `purpose`:
 * compared in constant time with each stored digest, so a used or expired
 * code is told apart from a wrong one. Inside the caller's transaction, with
 * the codes locked, so one code is used once.
 */
export async function matchCode(db: Queryable, settings: CodeSettings, userId: string, purpose: CodePurpose, code: string, now: Date): Promise<CodeCheck> {
  const given = digestOf(settings, purpose, userId, code);
  for (const stored of await codesOf(db, userId, purpose, true)) {
    if (digestsEqual(given, stored.typedDigest) || digestsEqual(given, stored.linkDigest)) return stateOfMatch(stored, now);
  }
  return 'wrong';
}
