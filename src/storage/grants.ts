import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// User grants: roles of a project given to a user. The project tables are
// read here with their own small queries, so grants do not depend on the
// project module.

export interface UserGrantRow {
  id: string;
  project_id: string;
  org_id: string;
  role_keys: string[];
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

/** A role a user holds through a grant, as the roles claim needs it. */
export interface UserRole {
  projectId: string;
  roleKey: string;
  orgId: string;
  orgPrimaryDomain: string;
}

export async function findProjectOwner(db: Queryable, projectId: string): Promise<{ org_id: string } | undefined> {
  const { rows } = await db.query<{ org_id: string }>('SELECT org_id FROM projects WHERE id = $1', [projectId]);
  return rows[0];
}

/** The subset of `roleKeys` defined on the project. */
export async function existingRoleKeys(db: Queryable, projectId: string, roleKeys: string[]): Promise<Set<string>> {
  if (!roleKeys.length) return new Set();
  const { rows } = await db.query<{ role_key: string }>('SELECT role_key FROM project_roles WHERE project_id = $1 AND role_key = ANY($2::text[])', [
    projectId,
    roleKeys,
  ]);
  return new Set(rows.map((row) => row.role_key));
}

export async function userGrantExists(db: Queryable, userId: string, projectId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM user_grants WHERE user_id = $1 AND project_id = $2', [userId, projectId]);
  return rows.length > 0;
}

export async function addUserGrant(write: Write, grant: { id: string; userId: string; projectId: string; orgId: string; roleKeys: string[] }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'usergrant',
    aggregateId: grant.id,
    type: 'user.grant.added',
    resourceOwner: grant.orgId,
    payload: { userId: grant.userId, projectId: grant.projectId, roleKeys: grant.roleKeys },
  });
  await write.tx.query(
    `INSERT INTO user_grants (id, user_id, project_id, org_id, role_keys, sequence, creation_date, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [grant.id, grant.userId, grant.projectId, grant.orgId, grant.roleKeys, sequence, write.at],
  );
}

export async function userGrantsOf(db: Queryable, userId: string): Promise<UserGrantRow[]> {
  const { rows } = await db.query<UserGrantRow>(
    `SELECT id, project_id, org_id, role_keys, sequence::text AS sequence, creation_date, change_date
       FROM user_grants WHERE user_id = $1 ORDER BY creation_date, id`,
    [userId],
  );
  return rows;
}

/**
 * Every project role a user holds through its grants, optionally only for
 * some projects; a role key no longer defined on its project is left out.
 */
export async function rolesOfUser(db: Queryable, userId: string, projectIds?: string[]): Promise<UserRole[]> {
  if (projectIds && !projectIds.length) return [];
  const { rows } = await db.query<{ project_id: string; role_key: string; org_id: string; primary_domain: string }>(
    `SELECT g.project_id, r.role_key, g.org_id, d.domain AS primary_domain
       FROM user_grants g
       JOIN project_roles r ON r.project_id = g.project_id AND r.role_key = ANY(g.role_keys)
       JOIN org_domains d ON d.org_id = g.org_id AND d.is_primary
      WHERE g.user_id = $1 AND ($2::text[] IS NULL OR g.project_id = ANY($2::text[]))
      ORDER BY g.project_id, r.role_key`,
    [userId, projectIds ?? null],
  );
  return rows.map((row) => ({ projectId: row.project_id, roleKey: row.role_key, orgId: row.org_id, orgPrimaryDomain: row.primary_domain }));
}

/** A grant of the user, or undefined (also for another user's grant). */
export async function findUserGrant(db: Queryable, userId: string, grantId: string): Promise<UserGrantRow | undefined> {
  if (grantId.includes('\u0000')) return undefined;
  const { rows } = await db.query<UserGrantRow>(
    `SELECT id, project_id, org_id, role_keys, sequence::text AS sequence, creation_date, change_date
       FROM user_grants WHERE id = $1 AND user_id = $2`,
    [grantId, userId],
  );
  return rows[0];
}

export async function changeUserGrant(write: Write, grant: { id: string; userId: string; orgId: string; roleKeys: string[] }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'usergrant',
    aggregateId: grant.id,
    type: 'user.grant.changed',
    resourceOwner: grant.orgId,
    payload: { userId: grant.userId, roleKeys: grant.roleKeys },
  });
  await write.tx.query('UPDATE user_grants SET role_keys = $2, sequence = $3, change_date = $4 WHERE id = $1', [grant.id, grant.roleKeys, sequence, write.at]);
}

export async function removeUserGrant(write: Write, grant: { id: string; userId: string; orgId: string }): Promise<void> {
  await write.append({
    aggregateType: 'usergrant',
    aggregateId: grant.id,
    type: 'user.grant.removed',
    resourceOwner: grant.orgId,
    payload: { userId: grant.userId },
  });
  await write.tx.query('DELETE FROM user_grants WHERE id = $1', [grant.id]);
}
