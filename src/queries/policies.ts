import type { Queryable } from '../storage/database.ts';
import { findPolicies, findPolicy, type StoredPolicy } from '../storage/policies.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, mayActInOrg, type Principal } from '../domain/roles.ts';
import { withDefaults, type PolicyKind } from '../domain/policies/kind.ts';

export interface PolicyView<T> {
  policy: T & { details: WriteDetails };
}

export interface OrgPolicyView<T> extends PolicyView<T> {
  /** True while the org follows the instance default. */
  isDefault: boolean;
}

/** The instance's own row stands in for the details of a default that was never set. */
async function instanceDetails(db: Queryable): Promise<{ id: string; details: WriteDetails }> {
  const { rows } = await db.query<{ id: string; sequence: string; creation_date: Date; change_date: Date }>(
    'SELECT id, sequence::text AS sequence, creation_date, change_date FROM instance LIMIT 1',
  );
  const instance = rows[0];
  if (!instance) throw new NotFound('the instance is not set up');
  return { id: instance.id, details: readDetails(instance, instance.id) };
}

async function view<T extends object>(
  db: Queryable,
  kind: PolicyKind<T>,
  stored: StoredPolicy | undefined,
  resourceOwner: string,
): Promise<T & { details: WriteDetails }> {
  const details = stored ? readDetails(stored, resourceOwner) : (await instanceDetails(db)).details;
  return { ...withDefaults(kind, stored?.settings as Partial<T> | undefined), details };
}

/** `GET /admin/v1/policies/{kind}`: the instance default (IAM_OWNER). */
export async function getInstancePolicy<T extends object>(db: Queryable, actor: Principal, kind: PolicyKind<T>): Promise<PolicyView<T>> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied(`the instance ${kind.name} policy requires IAM_OWNER`);
  const { id } = await instanceDetails(db);
  return { policy: await view(db, kind, await findPolicy(db, kind.name, null), id) };
}

/** `GET /management/v1/policies/{kind}`: what applies in the org, and whether that is the instance default (ORG_OWNER). */
export async function getOrgPolicy<T extends object>(db: Queryable, actor: Principal, orgId: string, kind: PolicyKind<T>): Promise<OrgPolicyView<T>> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied(`the org's ${kind.name} policy requires ORG_OWNER`);
  const { org, instance } = await findPolicies(db, kind.name, orgId);
  if (org) return { policy: await view(db, kind, org, orgId), isDefault: false };
  const { id } = await instanceDetails(db);
  return { policy: await view(db, kind, instance, id), isDefault: true };
}

/** The policy that applies to users of `orgId`: the org's override, else the instance default, else the built-in defaults. */
export async function effectivePolicy<T extends object>(db: Queryable, kind: PolicyKind<T>, orgId: string): Promise<T> {
  const { org, instance } = await findPolicies(db, kind.name, orgId);
  return withDefaults(kind, (org ?? instance)?.settings as Partial<T> | undefined);
}
