import { PermissionDenied } from './errors.ts';
import { hasInstanceRole, mayActInOrg, type Principal, type RoleMembership } from './roles.ts';

// Who may do what (docs/security.md): the rules every command and query of
// the admin API checks, as plain functions of the caller's roles.

/** Users of an org are managed by IAM_OWNER, or ORG_OWNER / ORG_USER_MANAGER of that org (docs/api/users.md). */
export function assertMayManageUsers(actor: Principal, orgId: string): void {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER', 'ORG_USER_MANAGER')) {
    throw new PermissionDenied('managing users of this organization requires ORG_OWNER or ORG_USER_MANAGER');
  }
}

/** Projects and their apps are the org owner's business. */
export function requireOrgOwner(actor: Principal, orgId: string): void {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('managing projects and apps requires ORG_OWNER');
}

/**
 * Acting on another user's credentials or security state (removing a second
 * factor or passkey, unlocking, ending sessions, PATs, keys, secrets,
 * removing the user) hands the caller what that user can do: whoever strips
 * an instance owner's second factor, or unlocks it so that guessing goes on,
 * attacks the instance. So the caller must hold every role the target
 * holds: for each membership of the target, the caller is the owner of that
 * scope (IAM_OWNER everywhere, ORG_OWNER in the org) or holds each of its
 * roles there. An ORG_USER_MANAGER cannot act on an ORG_OWNER, an ORG_OWNER
 * not on an IAM_OWNER (docs/security.md).
 */
export function holdsEveryRoleOf(actor: Principal, memberships: RoleMembership[]): boolean {
  if (actor.instanceRoles.has('IAM_OWNER')) return true;
  return memberships.every((membership) => {
    if (membership.scope === 'instance') return membership.roles.every((role) => actor.instanceRoles.has(role));
    const held = actor.orgRoles.get(membership.scope_id);
    return Boolean(held?.has('ORG_OWNER')) || membership.roles.every((role) => held?.has(role));
  });
}

/**
 * The policies of the instance's first org guard the instance's own
 * administrators, who are its members: an org owner there who could set
 * its lockout to "never" or drop its second factors would weaken the
 * instance owners' protection. Only IAM_OWNER changes them.
 */
export function mayChangeOrgPolicies(actor: Principal, orgId: string, firstOrgId: string | undefined): boolean {
  if (orgId === firstOrgId) return hasInstanceRole(actor, 'IAM_OWNER');
  return mayActInOrg(actor, orgId, 'ORG_OWNER');
}
