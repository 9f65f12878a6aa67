import { AlreadyExists, NotFound, PermissionDenied } from '../domain/errors.ts';
import { LOGIN_POLICY } from '../domain/policies/login.ts';
import { withDefaults } from '../domain/policies/kind.ts';
import { mayChangeOrgPolicies } from '../domain/permissions.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { usableIdp } from '../queries/idps.ts';
import type { IdpScope } from '../queries/idp-scope.ts';
import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import type { Announce } from '../storage/invalidation.ts';
import { findInstance } from '../storage/instance.ts';
import { addPolicyIdp, copyInstancePolicyIdps, removePolicyIdp } from '../storage/login-policy-idps.ts';
import { findPolicies, putPolicy } from '../storage/policies.ts';

/** The login policy's list is changed by whoever changes that policy: IAM_OWNER at the instance and for the first org, else ORG_OWNER. */
async function assertMayChangeList(db: Queryable, actor: Principal, scope: IdpScope): Promise<string> {
  const instance = await findInstance(db);
  if (!instance) throw new NotFound('the instance is not set up');
  const allowed = scope.orgId === null ? hasInstanceRole(actor, 'IAM_OWNER') : mayChangeOrgPolicies(actor, scope.orgId, instance.default_org_id);
  if (!allowed) throw new PermissionDenied("the login policy's identity providers require IAM_OWNER at the instance and for its first org, else ORG_OWNER");
  return instance.id;
}

/** An org that follows the instance default gets its own copy of the login policy, and of its list, first. */
async function ownLoginPolicy(write: Write, orgId: string): Promise<void> {
  const { org, instance } = await findPolicies(write.tx, LOGIN_POLICY.name, orgId);
  if (org) return;
  await putPolicy(write, { kind: LOGIN_POLICY.name, orgId, aggregateId: orgId }, { ...withDefaults(LOGIN_POLICY, instance?.settings) });
  await copyInstancePolicyIdps(write, orgId);
}

type PolicyRef = { orgId: string | null; aggregateId: string };

/** One change of the list, in the scope's own policy (an org's copy made first), announced to every node. */
async function changeList(
  db: Database,
  announce: Announce,
  actor: Principal,
  scope: IdpScope,
  change: (write: Write, policy: PolicyRef) => Promise<void>,
): Promise<{ details: WriteDetails }> {
  const done = await db.transaction(async (tx) => {
    const instanceId = await assertMayChangeList(tx, actor, scope);
    const write = await beginWrite(tx, actor);
    if (scope.orgId !== null) await ownLoginPolicy(write, scope.orgId);
    const owner = scope.orgId ?? instanceId;
    await change(write, { orgId: scope.orgId, aggregateId: owner });
    return { details: writeDetails(write, owner) };
  });
  announce('policies');
  return done;
}

/** `POST …/policies/login/idps` `{idpId}`: shows the provider on the login page (docs/api/idps.md). */
export function addLoginPolicyIdp(db: Database, announce: Announce, actor: Principal, scope: IdpScope, idpId: string): Promise<{ details: WriteDetails }> {
  return changeList(db, announce, actor, scope, async (write, policy) => {
    if (!(await usableIdp(write.tx, scope.orgId, idpId))) throw new NotFound('identity provider not found');
    if (!(await addPolicyIdp(write, policy, idpId))) throw new AlreadyExists('the login policy lists this identity provider already');
  });
}

/** `DELETE …/policies/login/idps/{idpId}`. */
export function removeLoginPolicyIdp(db: Database, announce: Announce, actor: Principal, scope: IdpScope, idpId: string): Promise<{ details: WriteDetails }> {
  return changeList(db, announce, actor, scope, async (write, policy) => {
    if (!(await removePolicyIdp(write, policy, idpId))) throw new NotFound('the login policy does not list this identity provider');
  });
}
