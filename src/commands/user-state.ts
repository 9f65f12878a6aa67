import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import { deactivateUser as deactivate, reactivateUser as reactivate } from '../storage/user-changes.ts';
import { lockUser as lock } from '../storage/lockout.ts';
import { InvalidArgument } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { userToActOn } from '../queries/get-user.ts';

type StateChange = (write: Write, user: { id: string; orgId: string }) => Promise<boolean>;

/**
 * One state change of another user: the every-role rule, nobody on itself
 * (it would end the caller's own access), 400 when the state does not
 * allow it. Every node's user cache forgets the user, so its tokens end
 * there within the cache's announce (docs/security.md).
 */
async function changeState(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  change: StateChange,
  refusal: string,
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  if (userId === actor.userId) throw new InvalidArgument('a user cannot change its own state');
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (!(await change(write, { id: user.id, orgId }))) throw new InvalidArgument(refusal);
    return { details: writeDetails(write, orgId) };
  });
  announce('users');
  announce('clients');
  return result;
}

/** `POST /management/v1/users/{userId}/_deactivate`: `USER_STATE_INACTIVE`, no sign-in, every token of the user inactive. */
export function deactivateUser(db: Database, announce: Announce, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return changeState(db, announce, actor, orgId, userId, deactivate, 'the user is already inactive');
}

/** `POST /management/v1/users/{userId}/_reactivate`: an inactive user is active again. */
export function reactivateUser(db: Database, announce: Announce, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return changeState(db, announce, actor, orgId, userId, reactivate, 'the user is not inactive');
}

/** `POST /management/v1/users/{userId}/_lock`: the lockout's lock without an end (`user.locked`), until an admin unlocks. */
export function lockUser(db: Database, announce: Announce, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  return changeState(db, announce, actor, orgId, userId, (write, user) => lock(write, user, 0), 'only an active user can be locked');
}
