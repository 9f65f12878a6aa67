import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from '../queries/get-user.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { deleteLink } from '../storage/idp-links.ts';

/**
 * `DELETE /management/v1/users/{userId}/links/{idpId}/{providedUserId}`:
 * the user no longer signs in through that identity. A link is a way into
 * the account, so the caller must hold every role the user holds
 * (docs/security.md, "Acting on another user").
 */
export async function removeIdpLink(
  db: Database,
  actor: Principal,
  orgId: string,
  link: { userId: string; idpId: string; providedUserId: string },
): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    await userToActOn(tx, actor, orgId, link.userId);
    const write = await beginWrite(tx, actor);
    if (!(await deleteLink(write, link, orgId))) throw new NotFound('the user has no such link');
    return { details: writeDetails(write, orgId) };
  });
}
