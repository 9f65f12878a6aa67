import { PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, mayActInOrg, type Principal } from '../domain/roles.ts';

/** Where a provider lives: the instance (`orgId` null, IAM_OWNER's) or an org (ORG_OWNER's). */
export interface IdpScope {
  orgId: string | null;
}

/** Providers and the login policy's list are read and written by the owner of their scope (docs/api/idps.md). */
export function assertMayManageIdps(actor: Principal, scope: IdpScope): void {
  if (scope.orgId === null ? !hasInstanceRole(actor, 'IAM_OWNER') : !mayActInOrg(actor, scope.orgId, 'ORG_OWNER')) {
    throw new PermissionDenied(scope.orgId === null ? "the instance's identity providers require IAM_OWNER" : "the org's identity providers require ORG_OWNER");
  }
}
