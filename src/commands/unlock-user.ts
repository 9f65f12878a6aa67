import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { unlockUser as unlock } from '../storage/lockout.ts';
import { InvalidArgument } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from '../queries/get-user.ts';

/** `POST /management/v1/users/{userId}/_unlock` (ORG_OWNER, ORG_USER_MANAGER holding every role of the user): `user.unlocked`, the failure count starts again. */
export async function unlockUser(db: Database, announce: Announce, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (!(await unlock(write, { id: user.id, orgId }, 'admin'))) throw new InvalidArgument('the user is not locked');
    return { details: writeDetails(write, orgId) };
  });
  // The token paths read users (their state) from a cache.
  announce('users');
  return result;
}
