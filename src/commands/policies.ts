import type { Database, Queryable } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { findPolicies, findPolicy, putPolicy, removeOrgPolicy } from '../storage/policies.ts';
import { InvalidArgument, NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { mayChangeOrgPolicies } from '../domain/permissions.ts';
import { withDefaults, type PolicyKind } from '../domain/policies/kind.ts';
import { LOGIN_POLICY } from '../domain/policies/login.ts';
import { clearOrgPolicyIdps, copyInstancePolicyIdps } from '../storage/login-policy-idps.ts';

// PUT sets the fields present in the body; the others keep the value that
// applied before (for an org's first override: the instance default's).

function requireFields<T extends object>(kind: PolicyKind<T>, input: Partial<T>): void {
  if (!Object.keys(input).length) throw new InvalidArgument(`no field given; the ${kind.name} policy has ${Object.keys(kind.defaults).join(', ')}`);
}

/** The settings a PUT leads to, refused when the policy as a whole could not work. */
function usable<T extends object>(kind: PolicyKind<T>, settings: T): T {
  const problems = kind.problems?.(settings) ?? [];
  if (problems.length)
    throw new InvalidArgument(`the ${kind.name} policy would not work: ${problems.map((p) => `${p.field}: ${p.description}`).join('; ')}`, problems);
  return settings;
}

/** ORG_OWNER of the org; IAM_OWNER for the instance's first org (docs/security.md). */
async function assertMayChangeOrgPolicy(db: Queryable, actor: Principal, orgId: string, kindName: string): Promise<void> {
  if (!mayChangeOrgPolicies(actor, orgId, (await findInstance(db))?.default_org_id)) {
    throw new PermissionDenied(`the org's ${kindName} policy requires ORG_OWNER, and IAM_OWNER for the instance's first org`);
  }
}

/** `PUT /admin/v1/policies/{kind}` (IAM_OWNER). */
export async function setInstancePolicy<T extends object>(
  db: Database,
  announce: Announce,
  actor: Principal,
  kind: PolicyKind<T>,
  input: Partial<T>,
): Promise<{ details: WriteDetails }> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied(`the instance ${kind.name} policy requires IAM_OWNER`);
  requireFields(kind, input);
  const done = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    const current = await findPolicy(tx, kind.name, null);
    const settings = usable(kind, { ...withDefaults(kind, current?.settings as Partial<T> | undefined), ...input });
    await putPolicy(write, { kind: kind.name, orgId: null, aggregateId: instance.id }, settings);
    return { details: writeDetails(write, instance.id) };
  });
  announce('policies');
  return done;
}

/** `PUT /management/v1/policies/{kind}`: the org's override (ORG_OWNER). */
export async function setOrgPolicy<T extends object>(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  kind: PolicyKind<T>,
  input: Partial<T>,
): Promise<{ details: WriteDetails }> {
  requireFields(kind, input);
  const done = await db.transaction(async (tx) => {
    await assertMayChangeOrgPolicy(tx, actor, orgId, kind.name);
    const write = await beginWrite(tx, actor);
    const { org, instance } = await findPolicies(tx, kind.name, orgId);
    const settings = usable(kind, { ...withDefaults(kind, (org ?? instance)?.settings as Partial<T> | undefined), ...input });
    await putPolicy(write, { kind: kind.name, orgId, aggregateId: orgId }, settings);
    // The login policy's list of identity providers is part of the org's own copy.
    if (!org && kind.name === LOGIN_POLICY.name) await copyInstancePolicyIdps(write, orgId);
    return { details: writeDetails(write, orgId) };
  });
  announce('policies');
  return done;
}

/** `DELETE /management/v1/policies/{kind}`: the org follows the instance default again (ORG_OWNER); 404 when it already does. */
export async function resetOrgPolicy<T extends object>(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  kind: PolicyKind<T>,
): Promise<{ details: WriteDetails }> {
  const done = await db.transaction(async (tx) => {
    await assertMayChangeOrgPolicy(tx, actor, orgId, kind.name);
    const write = await beginWrite(tx, actor);
    if (!(await removeOrgPolicy(write, { kind: kind.name, orgId, aggregateId: orgId }))) throw new NotFound(`the org has no ${kind.name} policy of its own`);
    if (kind.name === LOGIN_POLICY.name) await clearOrgPolicyIdps(write, orgId);
    return { details: writeDetails(write, orgId) };
  });
  announce('policies');
  return done;
}
