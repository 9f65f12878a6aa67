import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// Policies of every kind in one table (migration 0005): the instance default
// has org_id NULL, an org's override its org id.

export interface StoredPolicy {
  settings: Record<string, unknown>;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

/** The instance default (`orgId` null) or an org's override of `kind`, if one was set. */
export async function findPolicy(db: Queryable, kind: string, orgId: string | null): Promise<StoredPolicy | undefined> {
  const { rows } = await db.query<StoredPolicy>(
    `SELECT settings, sequence::text AS sequence, creation_date, change_date FROM policies
     WHERE kind = $1 AND org_id IS NOT DISTINCT FROM $2`,
    [kind, orgId],
  );
  return rows[0];
}

/**
 * The org's override and the instance default of `kind` in one query:
 * what applies to a user of the org is the first of them that exists.
 */
export async function findPolicies(db: Queryable, kind: string, orgId: string): Promise<{ org?: StoredPolicy; instance?: StoredPolicy }> {
  const { rows } = await db.query<StoredPolicy & { org_id: string | null }>(
    `SELECT org_id, settings, sequence::text AS sequence, creation_date, change_date FROM policies
     WHERE kind = $1 AND (org_id IS NULL OR org_id = $2)`,
    [kind, orgId],
  );
  return { org: rows.find((row) => row.org_id !== null), instance: rows.find((row) => row.org_id === null) };
}

export interface PolicyScope {
  kind: string;
  /** null: the instance default. */
  orgId: string | null;
  /** Aggregate of the event: the instance id, or the org id. */
  aggregateId: string;
}

function eventType(scope: PolicyScope, action: 'set' | 'removed'): string {
  return `${scope.orgId === null ? 'instance' : 'org'}.policy.${scope.kind}.${action}`;
}

/** Sets the whole policy (the caller merged the fields); `instance.policy.{kind}.set` or `org.policy.{kind}.set`. */
export async function putPolicy(write: Write, scope: PolicyScope, settings: Record<string, unknown>): Promise<void> {
  const sequence = await write.append({
    aggregateType: scope.orgId === null ? 'instance' : 'org',
    aggregateId: scope.aggregateId,
    type: eventType(scope, 'set'),
    resourceOwner: scope.aggregateId,
    payload: settings,
  });
  const updated = await write.tx.query(
    `UPDATE policies SET settings = $3, sequence = $4, change_date = $5 WHERE kind = $1 AND org_id IS NOT DISTINCT FROM $2`,
    [scope.kind, scope.orgId, JSON.stringify(settings), sequence, write.at],
  );
  if (updated.rowCount === 0) {
    await write.tx.query('INSERT INTO policies (kind, org_id, settings, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $5, $5)', [
      scope.kind,
      scope.orgId,
      JSON.stringify(settings),
      sequence,
      write.at,
    ]);
  }
}

/** Removes an org's override (`org.policy.{kind}.removed`); false when it had none. */
export async function removeOrgPolicy(write: Write, scope: PolicyScope & { orgId: string }): Promise<boolean> {
  const removed = await write.tx.query('DELETE FROM policies WHERE kind = $1 AND org_id = $2', [scope.kind, scope.orgId]);
  if (removed.rowCount === 0) return false;
  await write.append({ aggregateType: 'org', aggregateId: scope.aggregateId, type: eventType(scope, 'removed'), resourceOwner: scope.aggregateId });
  return true;
}
