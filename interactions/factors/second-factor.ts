import type { Database } from '../../src/storage/database.ts';
import type { SecondFactors } from '../../src/storage/second-factors.ts';
import type { LoginPolicy } from '../../src/domain/policies/login.ts';
import type { FactorKeys } from '../../src/commands/otp.ts';
import type { CodeSettings } from '../../src/commands/verification-codes.ts';
import type { RelyingParty } from '../../src/commands/passkeys.ts';
import type { ChallengeStore } from '../../src/security/challenges.ts';
import type { Messages } from '../../src/pages/i18n.ts';
import type { OtpSetup, PasskeyCeremony, SentCodeForm } from '../views/parts.ts';

/** What every factor may use: the stores, the keys and the WebAuthn relying party. */
export interface FactorEnv {
  db: Database;
  keys: FactorKeys;
  challenges: ChallengeStore;
  rp: RelyingParty;
  /** The issuer: its host names the account in authenticator apps. */
  issuer: string;
  /** The key of the digests of codes sent by mail or SMS, and the issuer. */
  codes: CodeSettings;
  /** Tells every node's caches that users changed (a code locked a user). */
  announce?: () => void;
}

/** Where a factor's form posts to, and the token it carries. */
export interface FactorForm {
  action: string;
  csrf: string;
}

/** A factor's part of the second-factor page (the page shows the parts side by side). */
export interface ChallengeView {
  otp?: FactorForm;
  passkey?: PasskeyCeremony;
  /** The forms of codes sent by mail or SMS, one per such factor. */
  sent?: SentCodeForm[];
}

/** A factor's part of a set-up page. */
export interface SetupView {
  /** Where the set-up page's code form posts (a set-up confirmed by a code). */
  confirm?: string;
  otp?: OtpSetup;
  passkey?: PasskeyCeremony;
  sent?: SentCodeForm[];
}

/**
 * A refused answer. `slip`: a typing slip or an expired challenge, which
 * does not count as a guess; `guess`: a wrong (or locked) code, counted
 * against the address and logged; `refused`: an authenticator that did not
 * verify, counted against the address.
 */
export type Refusal = { ok: false; error: string; kind: 'slip' | 'guess' | 'refused'; locked?: boolean };
export type Verified = { ok: true } | Refusal;
export type SetupDone = { ok: true; recoveryCodes?: string[] } | { ok: false; error?: string };

/**
 * A second factor (docs/security.md, Second factors): the login steps and
 * the security page reach TOTP, passkeys and any later factor only through
 * this. A new factor is one file implementing it plus one line in
 * factors/index.ts.
 */
export interface SecondFactor {
  readonly id: keyof SecondFactors;
  /** RFC 8176 `amr` of a login made of a password and this factor. */
  readonly amr: readonly string[];
  /** The path segment under the interaction its answer is posted to (the second-factor step). */
  readonly verifyPath: string;
  /** The path segment under the interaction its forced set-up is confirmed at. */
  readonly setupPath: string;
  /** The user has it, ready to use (from the one statement that reads every factor). */
  held(factors: SecondFactors): boolean;
  /** The login policy of the user's org lets them set it up. */
  allowed(policy: LoginPolicy): boolean;
  /** Its part of the second-factor page; `form` is where its answer goes. */
  challenge(env: FactorEnv, userId: string, form: FactorForm): Promise<ChallengeView>;
  /** Checks the posted answer of `userId`. */
  verify(env: FactorEnv, userId: string, body: Record<string, unknown>, t: Messages): Promise<Verified>;
  /** Its part of a set-up page: `resume` shows the set-up already begun (after a wrong answer), or nothing when there is none. */
  setup(env: FactorEnv, user: { id: string; loginName: string }, form: FactorForm, resume: boolean): Promise<SetupView>;
  /** Confirms the set-up from the posted answer; `ok: false` without an error when there is no set-up to confirm. */
  confirmSetup(env: FactorEnv, userId: string, body: Record<string, unknown>, t: Messages): Promise<SetupDone>;
  /** The user removes their own factor (the security page). */
  remove(env: FactorEnv, userId: string, body: Record<string, unknown>): Promise<void>;
  /** A factor whose code is sent: sends a new one ("send a new code", at `<its path>/resend`). */
  resend?(env: FactorEnv, userId: string): Promise<void>;
}

export function text(value: unknown, max = 1024): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}
