import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser } from '../storage/users.ts';
import { findInstance } from '../storage/instance.ts';
import { addMembership, changeMembership, membershipExists, membershipRoles, membershipsOf, otherHoldersOf, removeMembership } from '../storage/memberships.ts';
import type { Write } from '../storage/event-log.ts';
import { holdsEveryRoleOf } from '../domain/permissions.ts';
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

/** Where a membership is: the acting org (ORG_OWNER is its owner role) or the instance (IAM_OWNER). */
interface MemberScope {
  scope: 'instance' | 'org';
  scopeId: string;
  ownerRole: 'ORG_OWNER' | 'IAM_OWNER';
  what: string;
}

async function instanceScope(tx: Queryable): Promise<MemberScope> {
  const instance = await findInstance(tx);
  if (!instance) throw new NotFound('the instance is not set up');
  return { scope: 'instance', scopeId: instance.id, ownerRole: 'IAM_OWNER', what: 'the instance' };
}

const orgScope = (orgId: string): MemberScope => ({ scope: 'org', scopeId: orgId, ownerRole: 'ORG_OWNER', what: 'this organization' });

/**
 * Changing or ending a membership acts on that user's privileges: the caller
 * must hold every role the member holds anywhere (an ORG_OWNER does not
 * demote an IAM_OWNER who is also a member of the org), and the scope keeps
 * at least one owner, so that it is never left to be managed by nobody.
 */
async function checkMemberChange(write: Write, actor: Principal, where: MemberScope, userId: string, roles: string[]): Promise<void> {
  const current = await membershipRoles(write.tx, { userId, scope: where.scope, scopeId: where.scopeId });
  if (!current) throw new NotFound('member not found');
  if (!holdsEveryRoleOf(actor, await membershipsOf(write.tx, userId)))
    throw new PermissionDenied('changing this member requires every role the member holds', { reason: 'MEMBER_ROLES_NOT_HELD' });
  if (current.includes(where.ownerRole) && !roles.includes(where.ownerRole) && (await otherHoldersOf(write.tx, where, where.ownerRole, userId)) === 0)
    throw new InvalidArgument(
      `the last ${where.ownerRole} of ${where.what} cannot be removed or lose that role; make another member ${where.ownerRole} first`,
      [],
      { reason: 'LAST_OWNER' },
    );
}

async function changeMember(write: Write, actor: Principal, where: MemberScope, userId: string, roles: string[]): Promise<WriteDetails> {
  await checkMemberChange(write, actor, where, userId, roles);
  await changeMembership(write, { userId, scope: where.scope, scopeId: where.scopeId, roles, resourceOwner: where.scopeId });
  return writeDetails(write, where.scopeId);
}

async function removeMember(write: Write, actor: Principal, where: MemberScope, userId: string): Promise<WriteDetails> {
  await checkMemberChange(write, actor, where, userId, []);
  await removeMembership(write, { userId, scope: where.scope, scopeId: where.scopeId, resourceOwner: where.scopeId });
  return writeDetails(write, where.scopeId);
}

function requireOrgMemberManager(actor: Principal, orgId: string): void {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('managing members of this organization requires ORG_OWNER');
}

function requireInstanceMemberManager(actor: Principal): void {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('managing instance members requires IAM_OWNER');
}

/** `PUT /management/v1/orgs/me/members/{userId}`: replaces the member's org roles. */
export async function changeOrgMember(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  input: { roles: string[] },
): Promise<{ details: WriteDetails }> {
  requireOrgMemberManager(actor, orgId);
  const roles = checkRoles(input.roles, isOrgRole, 'org');
  return db.transaction(async (tx) => ({ details: await changeMember(await beginWrite(tx, actor), actor, orgScope(orgId), userId, roles) }));
}

export async function removeOrgMember(db: Database, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  requireOrgMemberManager(actor, orgId);
  return db.transaction(async (tx) => ({ details: await removeMember(await beginWrite(tx, actor), actor, orgScope(orgId), userId) }));
}

/** `PUT /admin/v1/members/{userId}`: replaces the member's instance roles. */
export async function changeInstanceMember(db: Database, actor: Principal, userId: string, input: { roles: string[] }): Promise<{ details: WriteDetails }> {
  requireInstanceMemberManager(actor);
  const roles = checkRoles(input.roles, isInstanceRole, 'instance');
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    return { details: await changeMember(write, actor, await instanceScope(tx), userId, roles) };
  });
}

export async function removeInstanceMember(db: Database, actor: Principal, userId: string): Promise<{ details: WriteDetails }> {
  requireInstanceMemberManager(actor);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    return { details: await removeMember(write, actor, await instanceScope(tx), userId) };
  });
}
