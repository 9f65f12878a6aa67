import type { Database } from '../storage/database.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { beginWrite } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { changePassword } from '../storage/user-changes.ts';
import { enqueueMessage } from '../storage/outbox.ts';
import { loginName } from '../domain/users.ts';
import { passwordRulesBroken, type PasswordPolicy } from '../domain/password-policy.ts';
import type { PolicyKind } from '../domain/policies/kind.ts';
import type { PasswordComplexityPolicy } from '../domain/policies/password-complexity.ts';
import { hashPassword } from '../security/passwords.ts';
import { orgPasswordPolicy } from '../queries/password-policy.ts';
import { passwordLogin } from './password-login.ts';
import { endSessionsOf } from './end-user-sessions.ts';

export interface PasswordChangeDeps {
  db: Database;
  engine: EngineHolder;
  passwordComplexity: PolicyKind<PasswordComplexityPolicy>;
  /** Tells every node's caches that users changed (a wrong password locked the user). */
  announce?: () => void;
}

export interface PasswordChange {
  current: string;
  next: string;
  /** The record key of the browser session the user acts from: it stays signed in. */
  keepSession?: string;
}

export type PasswordChangeOutcome = { result: 'changed' } | { result: 'wrong' } | { result: 'locked' } | { result: 'policy'; policy: PasswordPolicy };

/** `PasswordChanged` to the user's address, in the user's language. */
async function queueNotice(write: Awaited<ReturnType<typeof beginWrite>>, user: UserRow): Promise<void> {
  if (!user.email) return;
  await enqueueMessage(write, {
    type: 'PasswordChanged',
    recipient: user.email,
    language: user.preferred_language ?? '',
    values: { UserName: loginName(user.user_name, user.primary_domain), FirstName: user.first_name ?? '', OrgName: user.org_name },
    userId: user.id,
    orgId: user.org_id,
  });
}

/**
 * A signed-in user changes their own password on the security page
 * (docs/security.md, "Changing the password"): the current password is
 * checked as a login is, so a wrong one counts towards the lockout; the new
 * one must meet the org's complexity policy. The change, its event and the
 * `PasswordChanged` mail commit together; then every other browser session
 * of the user ends, as whoever else knew the old password may hold one.
 */
export async function changeOwnPassword(deps: PasswordChangeDeps, userId: string, change: PasswordChange): Promise<PasswordChangeOutcome> {
  const user = await findUser(deps.db, userId);
  if (user?.type !== 'human') return { result: 'wrong' };
  const login = await passwordLogin(deps.db, loginName(user.user_name, user.primary_domain), change.current, deps.announce);
  if (login.result !== 'signed-in') return { result: login.result };
  const policy = await orgPasswordPolicy(deps.db, deps.passwordComplexity, user.org_id);
  if (passwordRulesBroken(change.next, policy).length) return { result: 'policy', policy };
  const passwordHash = await hashPassword(change.next);
  await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, { userId: user.id });
    await changePassword(write, { id: user.id, orgId: user.org_id }, passwordHash);
    await queueNotice(write, user);
  });
  await endSessionsOf(deps.db, deps.engine, user.id, change.keepSession);
  return { result: 'changed' };
}
