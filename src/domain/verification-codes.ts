import { randomBytes, randomInt } from 'node:crypto';

// The codes of the self-service flows (docs/self-service.md): an invitation, an
// email or phone verification, a password reset, a sign-in code sent by mail
// or SMS. Every code has two forms for one purpose: a short one a person
// types, and a long one for a link (messages without a link carry only the
// short one).
// Plain rules only: the digests at rest are src/commands/verification-codes.ts's.

export const CODE_PURPOSES = ['init', 'email', 'reset', 'phone', 'otp_email', 'otp_sms'] as const;
export type CodePurpose = (typeof CODE_PURPOSES)[number];

/** How long a code lives: an invitation waits for its reader, a verification or reset answers a request just made, a sign-in code a sign-in under way. */
export const CODE_LIFETIME_SECONDS: Record<CodePurpose, number> = {
  init: 72 * 3600,
  email: 3600,
  reset: 3600,
  phone: 3600,
  otp_email: 300,
  otp_sms: 300,
};

/** At most this many messages with codes per user and purpose within `CODE_MESSAGE_WINDOW_SECONDS`. */
export const CODE_MESSAGE_LIMIT = 5;
export const CODE_MESSAGE_WINDOW_SECONDS = 600;

const TYPED_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** 10 characters of 36: 51 bits, against an attacker the lockout stops after a handful of guesses. */
export const TYPED_CODE_LENGTH = 10;
/** 32 random bytes in base64url. */
const LINK_CODE = /^[A-Za-z0-9_-]{43}$/;
const TYPED_CODE = /^[A-Z0-9]{8,32}$/;

export interface NewCodes {
  /** What a person types: `[A-Z0-9]`, no look-alike trouble once upper-cased. */
  typed: string;
  /** What the link carries: 32 random bytes. */
  link: string;
  expiresAt: Date;
}

export function newCodes(purpose: CodePurpose, now: Date): NewCodes {
  let typed = '';
  for (let i = 0; i < TYPED_CODE_LENGTH; i++) typed += TYPED_ALPHABET[randomInt(TYPED_ALPHABET.length)];
  return { typed, link: randomBytes(32).toString('base64url'), expiresAt: new Date(now.getTime() + CODE_LIFETIME_SECONDS[purpose] * 1000) };
}

/**
 * A code as entered or taken from a link, in the form its digest was made
 * of: a link code as it is; a typed one upper-cased, its spaces and dashes
 * (a person's grouping) dropped. Undefined when it can be neither: such an
 * input is a typing slip, not a guess.
 */
export function normaliseCode(input: string): string | undefined {
  const trimmed = input.trim();
  if (LINK_CODE.test(trimmed)) return trimmed;
  const typed = trimmed.replace(/[\s-]/g, '').toUpperCase();
  return TYPED_CODE.test(typed) ? typed : undefined;
}

/** The text a digest is made of: a code counts for one user and one purpose only. */
export function codeDigestInput(purpose: CodePurpose, userId: string, code: string): string {
  return `${purpose}\u0000${userId}\u0000${code}`;
}

/** Why a code given is not accepted; `ok` when it is. */
export type CodeCheck = 'ok' | 'wrong' | 'expired' | 'used';

/** The state of a stored code that matched what was given, at `now`. */
export function stateOfMatch(code: { expiresAt: Date; usedAt: Date | null }, now: Date): CodeCheck {
  if (code.usedAt) return 'used';
  return code.expiresAt.getTime() <= now.getTime() ? 'expired' : 'ok';
}
