export const INSTANCE_ROLES = ['IAM_OWNER', 'IAM_END_USER_IMPERSONATOR'] as const;
export const ORG_ROLES = ['ORG_OWNER', 'ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR'] as const;

export type InstanceRole = (typeof INSTANCE_ROLES)[number];
export type OrgRole = (typeof ORG_ROLES)[number];

/** Who is calling, with every role membership they hold. */
export interface Principal {
  userId: string;
  orgId: string;
  instanceRoles: Set<string>;
  orgRoles: Map<string, Set<string>>;
  /** The user acting for this one, when the call came with an impersonation token (RFC 8693 `act`). */
  impersonatorId?: string;
}

export function isOrgRole(role: string): role is OrgRole {
  return (ORG_ROLES as readonly string[]).includes(role);
}

export function isInstanceRole(role: string): role is InstanceRole {
  return (INSTANCE_ROLES as readonly string[]).includes(role);
}

export function hasInstanceRole(principal: Principal, ...roles: InstanceRole[]): boolean {
  return roles.some((role) => principal.instanceRoles.has(role));
}

/** An instance owner may act in every org; otherwise one of `roles` in that org. */
export function mayActInOrg(principal: Principal, orgId: string, ...roles: OrgRole[]): boolean {
  if (principal.instanceRoles.has('IAM_OWNER')) return true;
  const held = principal.orgRoles.get(orgId);
  return roles.some((role) => held?.has(role));
}

/**
 * Only an instance owner decides which apps may obtain tokens for the
 * instance's own API: a change of an app's iamApiAccess needs IAM_OWNER,
 * and only apps of the instance's first org may have it.
 */
export function apiAccessProblem(
  actor: Principal,
  change: { from: boolean; to: boolean; appOrgId: string; firstOrgId: string | undefined },
): 'permission' | 'org' | undefined {
  if (change.from !== change.to && !hasInstanceRole(actor, 'IAM_OWNER')) return 'permission';
  if (change.to && change.appOrgId !== change.firstOrgId) return 'org';
  return undefined;
}

/** A role membership as stored: on the instance or on one org. */
export interface RoleMembership {
  scope: 'instance' | 'org';
  scope_id: string;
  roles: string[];
}

/**
 * Impersonation reaches end users only: IAM_END_USER_IMPERSONATOR acts for
 * users without an instance membership, ORG_END_USER_IMPERSONATOR for users
 * of its own org without any membership. So no impersonation token ever
 * carries the powers of the instance's administrators, and an org's
 * impersonator none of its org's.
 */
export function mayImpersonate(actor: RoleMembership[], subject: { orgId: string; memberships: RoleMembership[] }): boolean {
  const holds = (scope: 'instance' | 'org', role: string, scopeId?: string) =>
    actor.some((m) => m.scope === scope && (scopeId === undefined || m.scope_id === scopeId) && m.roles.includes(role));
  if (holds('instance', 'IAM_END_USER_IMPERSONATOR') && !subject.memberships.some((m) => m.scope === 'instance' && m.roles.length > 0)) return true;
  return holds('org', 'ORG_END_USER_IMPERSONATOR', subject.orgId) && !subject.memberships.some((m) => m.roles.length > 0);
}
