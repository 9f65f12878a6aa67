import type { Queryable } from '../storage/database.ts';
import { findHumansByLoginName } from '../storage/users.ts';
import { verifyPassword } from '../security/passwords.ts';
import { MAX_PASSWORD_LENGTH } from '../domain/password-policy.ts';

/**
 * The password check of the login UI: the login name is the full
 * `userName@primaryDomain` or a bare userName that is unique in the instance.
 * Every failure costs one argon2id verification, so timing does not tell
 * unknown users from wrong passwords.
 */
export async function authenticatePassword(db: Queryable, login: string, password: string): Promise<string | undefined> {
  const candidates = login.length <= 500 ? await findHumansByLoginName(db, login.trim()) : [];
  // A full login name is unique by construction; a bare userName counts
  // only when no other user has it.
  const exact = candidates.find((c) => c.full_match) ?? (candidates.length === 1 ? candidates[0] : undefined);
  const tooLong = password.length > MAX_PASSWORD_LENGTH;
  const ok = await verifyPassword(tooLong ? '' : password, exact?.password_hash);
  return ok && exact && !tooLong ? exact.id : undefined;
}
