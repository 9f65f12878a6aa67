import type { Queryable } from '../storage/database.ts';
import { findHumansByLoginName, type LoginCandidate } from '../storage/users.ts';
import { verifyPassword } from '../security/passwords.ts';
import { MAX_PASSWORD_LENGTH } from '../domain/password-policy.ts';

export interface PasswordCheck {
  /** The user the login name means, if any (active or locked). */
  user?: Pick<LoginCandidate, 'id' | 'org_id' | 'state'>;
  passwordOk: boolean;
}

/**
 * The password check of the login UI: the login name is the full
 * `userName@primaryDomain` or a bare userName that is unique in the instance.
 * Every check costs one argon2id verification, so timing tells neither
 * unknown users from wrong passwords nor locked users from others.
 */
export async function checkPassword(db: Queryable, login: string, password: string): Promise<PasswordCheck> {
  const exact = await humanByLoginName(db, login);
  const tooLong = password.length > MAX_PASSWORD_LENGTH;
  const ok = await verifyPassword(tooLong ? '' : password, exact?.password_hash);
  return { ...(exact ? { user: { id: exact.id, org_id: exact.org_id, state: exact.state } } : {}), passwordOk: ok && Boolean(exact) && !tooLong };
}

/** The id of the active user these credentials sign in, without counting anything (see commands/password-login.ts for the login). */
export async function authenticatePassword(db: Queryable, login: string, password: string): Promise<string | undefined> {
  const { user, passwordOk } = await checkPassword(db, login, password);
  return passwordOk && user?.state === 'active' ? user.id : undefined;
}

/** The active or locked human a typed login name means, if exactly one. */
export async function humanByLoginName(db: Queryable, login: string): Promise<LoginCandidate | undefined> {
  const candidates = login.length <= 500 && !login.includes('\u0000') ? await findHumansByLoginName(db, login.trim()) : [];
  // A full login name is unique by construction; a bare userName counts
  // only when no other user has it.
  return candidates.find((c) => c.full_match) ?? (candidates.length === 1 ? candidates[0] : undefined);
}
