import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// The providers a login policy lists (migration 0046): the instance
// default's (org_id NULL) or an org's own, which applies while the org has
// a login policy of its own.

export interface ListedIdp {
  idpId: string;
  name: string;
  /** IDP_TYPE_… */
  type: string;
  /** null: an instance-level provider. */
  ownerOrgId: string | null;
}

/** The providers of the instance default (`orgId` null) or of an org's own policy, in the order they were added. */
export async function listPolicyIdps(db: Queryable, orgId: string | null): Promise<ListedIdp[]> {
  const { rows } = await db.query<{ idp_id: string; name: string; kind: string; org_id: string | null }>(
    `SELECT p.idp_id, i.name, i.kind, i.org_id FROM login_policy_idps p JOIN identity_providers i ON i.id = p.idp_id
     WHERE p.org_id IS NOT DISTINCT FROM $1 ORDER BY p.creation_date, p.idp_id`,
    [orgId],
  );
  return rows.map((row) => ({ idpId: row.idp_id, name: row.name, type: row.kind, ownerOrgId: row.org_id }));
}

function event(write: Write, scope: { orgId: string | null; aggregateId: string }, action: 'added' | 'removed', idpId: string): Promise<string> {
  const level = scope.orgId === null ? 'instance' : 'org';
  return write.append({
    aggregateType: level,
    aggregateId: scope.aggregateId,
    type: `${level}.policy.login.idp.${action}`,
    resourceOwner: scope.aggregateId,
    payload: { idpId },
  });
}

/** Adds the provider to the list; false when it is listed already. */
export async function addPolicyIdp(write: Write, scope: { orgId: string | null; aggregateId: string }, idpId: string): Promise<boolean> {
  const present = await write.tx.query('SELECT 1 FROM login_policy_idps WHERE org_id IS NOT DISTINCT FROM $1 AND idp_id = $2', [scope.orgId, idpId]);
  if (present.rows.length) return false;
  await event(write, scope, 'added', idpId);
  await write.tx.query('INSERT INTO login_policy_idps (org_id, idp_id, creation_date) VALUES ($1, $2, $3)', [scope.orgId, idpId, write.at]);
  return true;
}

export async function removePolicyIdp(write: Write, scope: { orgId: string | null; aggregateId: string }, idpId: string): Promise<boolean> {
  const removed = await write.tx.query('DELETE FROM login_policy_idps WHERE org_id IS NOT DISTINCT FROM $1 AND idp_id = $2', [scope.orgId, idpId]);
  if (!removed.rowCount) return false;
  await event(write, scope, 'removed', idpId);
  return true;
}

/** An org's first own login policy starts with the instance default's providers. */
export async function copyInstancePolicyIdps(write: Write, orgId: string): Promise<void> {
  await write.tx.query(
    `INSERT INTO login_policy_idps (org_id, idp_id, creation_date)
     SELECT $1, idp_id, creation_date FROM login_policy_idps WHERE org_id IS NULL ON CONFLICT DO NOTHING`,
    [orgId],
  );
}

/** An org back on the instance default keeps no list of its own. */
export async function clearOrgPolicyIdps(write: Write, orgId: string): Promise<void> {
  await write.tx.query('DELETE FROM login_policy_idps WHERE org_id = $1', [orgId]);
}
