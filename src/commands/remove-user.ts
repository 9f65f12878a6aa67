import type { Database, Transaction } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { removeUser as deleteUser } from '../storage/users.ts';
import { InvalidArgument } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from '../queries/get-user.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';

/**
 * `DELETE /management/v1/users/{userId}`: the user and, with it, its PATs,
 * keys, client secret, memberships and grants; its credentials fail at once.
 * Nobody removes itself (that would lock out the last admin by accident).
 * `beforeRemoval`: the caller's own check within the removal's transaction
 * (SCIM's `If-Match`, docs/api/scim.md), which refuses it by throwing.
 */
export async function removeUser(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  beforeRemoval?: (tx: Transaction) => Promise<void>,
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  if (userId === actor.userId) throw new InvalidArgument('a user cannot remove itself');
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await beforeRemoval?.(tx);
    const user = await userToActOn(tx, actor, orgId, userId);
    await deleteUser(write, { id: user.id, orgId, userName: user.user_name });
    return { details: writeDetails(write, orgId) };
  });
  // Token paths read users from a cache, and a machine user is an engine client too.
  announce('users');
  announce('clients');
  return result;
}
