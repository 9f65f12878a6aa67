import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { changeOrgState, findOrg } from '../storage/orgs.ts';
import { findInstance } from '../storage/instance.ts';
import { InvalidArgument, NotFound, PermissionDenied } from '../domain/errors.ts';
import { mayActInOrg, type Principal } from '../domain/roles.ts';
import { ACTIVE } from '../domain/may-act.ts';

const INACTIVE = 'inactive';

interface StateChange {
  from: string;
  to: string;
  event: 'org.deactivated' | 'org.reactivated';
  refusal: string;
}

/**
 * An org's state change: ORG_OWNER of the org or IAM_OWNER; the instance's
 * first org never stops (its owners run the instance), and no user of the org
 * deactivates it (it would end the caller's own access with no way back).
 * Every node's user and client caches forget what they read, so the org's
 * users and apps stop, or start again, within the caches' announce.
 */
async function changeState(db: Database, announce: Announce, actor: Principal, orgId: string, change: StateChange): Promise<{ details: WriteDetails }> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('changing the state of this organization requires ORG_OWNER');
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (!(await findOrg(tx, orgId))) throw new NotFound('organization not found');
    if (change.to === INACTIVE) {
      if ((await findInstance(tx))?.default_org_id === orgId) throw new InvalidArgument("the instance's first organization cannot be deactivated");
      if (actor.orgId === orgId) throw new InvalidArgument('an organization cannot be deactivated by one of its own users');
    }
    if (!(await changeOrgState(write, { id: orgId, ...change }))) throw new InvalidArgument(change.refusal);
    return { details: writeDetails(write, orgId) };
  });
  announce('users');
  announce('clients');
  return result;
}

/** `POST /management/v1/orgs/me/_deactivate`: the org's users cannot sign in, their tokens end, its apps start no sign-in. */
export function deactivateOrg(db: Database, announce: Announce, actor: Principal, orgId: string): Promise<{ details: WriteDetails }> {
  return changeState(db, announce, actor, orgId, { from: ACTIVE, to: INACTIVE, event: 'org.deactivated', refusal: 'the organization is already inactive' });
}

/** `POST /management/v1/orgs/me/_reactivate`: an inactive org acts again; its users' unexpired tokens count again. */
export function reactivateOrg(db: Database, announce: Announce, actor: Principal, orgId: string): Promise<{ details: WriteDetails }> {
  return changeState(db, announce, actor, orgId, { from: INACTIVE, to: ACTIVE, event: 'org.reactivated', refusal: 'the organization is not inactive' });
}
