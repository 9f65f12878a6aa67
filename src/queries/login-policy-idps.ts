import type { Principal } from '../domain/roles.ts';
import { hasInstanceRole, mayActInOrg } from '../domain/roles.ts';
import { PermissionDenied } from '../domain/errors.ts';
import { LOGIN_POLICY } from '../domain/policies/login.ts';
import type { SearchResult } from '../domain/search.ts';
import type { Queryable } from '../storage/database.ts';
import { listPolicyIdps, type ListedIdp } from '../storage/login-policy-idps.ts';
import { findPolicy } from '../storage/policies.ts';
import type { IdpScope } from './idp-scope.ts';

/** One provider of the login policy's list (docs/api/idps.md). */
export interface PolicyIdpView {
  idpId: string;
  idpName: string;
  idpType: string;
  ownerType: 'IDP_OWNER_TYPE_SYSTEM' | 'IDP_OWNER_TYPE_ORG';
}

/** The list that applies to an org: its own while it has a login policy of its own, else the instance default's. */
export async function effectivePolicyIdps(db: Queryable, orgId: string | null): Promise<ListedIdp[]> {
  if (orgId === null) return listPolicyIdps(db, null);
  const own = await findPolicy(db, LOGIN_POLICY.name, orgId);
  return listPolicyIdps(db, own ? orgId : null);
}

/** `POST …/policies/login/idps/_search`: every provider of the list that applies (it is short). */
export async function searchPolicyIdps(db: Queryable, actor: Principal, scope: IdpScope): Promise<SearchResult<PolicyIdpView>> {
  const allowed = scope.orgId === null ? hasInstanceRole(actor, 'IAM_OWNER') : mayActInOrg(actor, scope.orgId, 'ORG_OWNER');
  if (!allowed) throw new PermissionDenied("the login policy's identity providers require ORG_OWNER, or IAM_OWNER at the instance");
  const listed = await effectivePolicyIdps(db, scope.orgId);
  return {
    details: { totalResult: String(listed.length), viewTimestamp: new Date().toISOString() },
    result: listed.map((idp) => ({
      idpId: idp.idpId,
      idpName: idp.name,
      idpType: idp.type,
      ownerType: idp.ownerOrgId ? 'IDP_OWNER_TYPE_ORG' : 'IDP_OWNER_TYPE_SYSTEM',
    })),
  };
}
