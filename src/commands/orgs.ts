import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { addOrg, domainTaken, findOrg, renameOrg } from '../storage/orgs.ts';
import { addMembership } from '../storage/memberships.ts';
import type { Announce } from '../storage/invalidation.ts';
import { AlreadyExists, NotFound, PermissionDenied } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { generatedDomain } from '../domain/orgs.ts';
import { hasInstanceRole, mayActInOrg, type Principal } from '../domain/roles.ts';

/** An instance owner, or whoever already owns an org, may found another; end users may not. */
function mayCreateOrgs(actor: Principal): boolean {
  return hasInstanceRole(actor, 'IAM_OWNER') || [...actor.orgRoles.values()].some((roles) => roles.has('ORG_OWNER'));
}

/**
 * `POST /management/v1/orgs`: an org named `name` with the domain
 * `{slug of name}.{INSTANCE_DOMAIN}`; the caller becomes its ORG_OWNER.
 */
export async function createOrg(
  db: Database,
  instanceDomain: string,
  actor: Principal,
  input: { name: string },
): Promise<{ id: string; details: WriteDetails }> {
  if (!mayCreateOrgs(actor)) throw new PermissionDenied('creating an organization requires IAM_OWNER or ORG_OWNER of an organization');
  const id = newId();
  const domain = generatedDomain(input.name, instanceDomain);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (await domainTaken(tx, domain)) throw new AlreadyExists(`an organization with the domain "${domain}" already exists`);
    await addOrg(write, { id, name: input.name, domain });
    await addMembership(write, { userId: actor.userId, scope: 'org', scopeId: id, roles: ['ORG_OWNER'], resourceOwner: id });
    return { id, details: writeDetails(write, id) };
  });
}

/** `PUT /management/v1/orgs/me`: renames the acting org; its users' tokens carry the new name from then on (announced). */
export async function changeOrg(
  deps: { db: Database; announce: Announce },
  actor: Principal,
  orgId: string,
  input: { name: string },
): Promise<{ details: WriteDetails }> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('renaming this organization requires ORG_OWNER');
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (!(await findOrg(tx, orgId))) throw new NotFound('organization not found');
    await renameOrg(write, { id: orgId, name: input.name });
    return writeDetails(write, orgId);
  });
  deps.announce('users');
  return { details };
}
