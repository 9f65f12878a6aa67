import type { Queryable } from '../storage/database.ts';
import { membershipsOf } from '../storage/memberships.ts';
import { mayImpersonate, type Principal } from '../domain/roles.ts';

/** A caller with every role they hold on the instance and in each org. */
export async function loadPrincipal(db: Queryable, user: { userId: string; orgId: string; impersonatorId?: string }): Promise<Principal> {
  const instanceRoles = new Set<string>();
  const orgRoles = new Map<string, Set<string>>();
  for (const membership of await membershipsOf(db, user.userId)) {
    if (membership.scope === 'instance') for (const role of membership.roles) instanceRoles.add(role);
    else orgRoles.set(membership.scope_id, new Set(membership.roles));
  }
  return { userId: user.userId, orgId: user.orgId, instanceRoles, orgRoles, ...(user.impersonatorId ? { impersonatorId: user.impersonatorId } : {}) };
}

/** Whether `actorId` may act for the subject (token exchange): impersonation reaches end users only (docs/security.md). */
export function impersonationAllowed(db: Queryable) {
  return async (actorId: string, subject: { userId: string; orgId: string }): Promise<boolean> => {
    const [actor, memberships] = await Promise.all([membershipsOf(db, actorId), membershipsOf(db, subject.userId)]);
    return mayImpersonate(actor, { orgId: subject.orgId, memberships });
  };
}
