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
