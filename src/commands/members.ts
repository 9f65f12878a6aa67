import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser } from '../storage/users.ts';
import { findInstance } from '../storage/instance.ts';
import { addMembership, membershipExists } from '../storage/memberships.ts';
import { AlreadyExists, InvalidArgument, NotFound, PermissionDenied, type FieldViolation } from '../domain/errors.ts';
import { hasInstanceRole, isInstanceRole, isOrgRole, mayActInOrg, type Principal } from '../domain/roles.ts';

export interface MemberInput {
  userId: string;
  roles: string[];
}

/** Every role must be of the scope's kind; all unknown ones are named at once. */
function checkRoles(roles: string[], known: (role: string) => boolean, kind: string): string[] {
  const violations: FieldViolation[] = roles.flatMap((role, i) =>
    known(role) ? [] : [{ field: `roles[${i}]`, description: `"${role}" is not an ${kind} role` }],
  );
  if (violations.length) throw new InvalidArgument(`unknown ${kind} roles: ${violations.map((v) => v.field).join(', ')}`, violations);
  return [...new Set(roles)];
}

async function existingUser(tx: Queryable, userId: string): Promise<{ org_id: string }> {
  const user = await findUser(tx, userId);
  if (!user) throw new NotFound('user not found');
  return user;
}

/**
 * `POST /management/v1/orgs/me/members`: org roles for a user of the
 * instance, in the acting org. A user of another org joins only by an
 * instance owner or an owner of that user's own org: otherwise any org owner
 * could pull in an outsider, e.g. an instance administrator, and act on them
 * (docs/security.md).
 */
export async function addOrgMember(db: Database, actor: Principal, orgId: string, input: MemberInput): Promise<{ details: WriteDetails }> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('adding members of this organization requires ORG_OWNER');
  const roles = checkRoles(input.roles, isOrgRole, 'org');
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await existingUser(tx, input.userId);
    if (user.org_id !== orgId && !mayActInOrg(actor, user.org_id, 'ORG_OWNER')) {
      throw new PermissionDenied("adding a user of another organization requires IAM_OWNER or ORG_OWNER of the user's organization");
    }
    if (await membershipExists(tx, { userId: input.userId, scope: 'org', scopeId: orgId }))
      throw new AlreadyExists('the user is already a member of this organization');
    await addMembership(write, { userId: input.userId, scope: 'org', scopeId: orgId, roles, resourceOwner: orgId });
    return { details: writeDetails(write, orgId) };
  });
}

/** `POST /admin/v1/members`: instance roles for a user of the instance. */
export async function addInstanceMember(db: Database, actor: Principal, input: MemberInput): Promise<{ details: WriteDetails }> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('adding instance members requires IAM_OWNER');
  const roles = checkRoles(input.roles, isInstanceRole, 'instance');
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    await existingUser(tx, input.userId);
    if (await membershipExists(tx, { userId: input.userId, scope: 'instance', scopeId: instance.id }))
      throw new AlreadyExists('the user is already a member of the instance');
    await addMembership(write, { userId: input.userId, scope: 'instance', scopeId: instance.id, roles, resourceOwner: instance.id });
    return { details: writeDetails(write, instance.id) };
  });
}
