import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export interface ProjectRow {
  id: string;
  org_id: string;
  name: string;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

export async function addProject(write: Write, project: { id: string; orgId: string; name: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: project.id,
    type: 'project.added',
    resourceOwner: project.orgId,
    payload: { name: project.name },
  });
  await write.tx.query('INSERT INTO projects (id, org_id, name, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $5, $5)', [
    project.id,
    project.orgId,
    project.name,
    sequence,
    write.at,
  ]);
}

export async function findProject(db: Queryable, id: string): Promise<ProjectRow | undefined> {
  const { rows } = await db.query<ProjectRow>('SELECT id, org_id, name, sequence::text AS sequence, creation_date, change_date FROM projects WHERE id = $1', [
    id,
  ]);
  return rows[0];
}

export async function addProjectRole(write: Write, role: { projectId: string; orgId: string; roleKey: string; displayName: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: role.projectId,
    type: 'project.role.added',
    resourceOwner: role.orgId,
    payload: { roleKey: role.roleKey, displayName: role.displayName },
  });
  await write.tx.query('INSERT INTO project_roles (project_id, role_key, display_name) VALUES ($1, $2, $3)', [role.projectId, role.roleKey, role.displayName]);
  await write.tx.query('UPDATE projects SET sequence = $2, change_date = $3 WHERE id = $1', [role.projectId, sequence, write.at]);
}

export async function projectRoleExists(db: Queryable, projectId: string, roleKey: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM project_roles WHERE project_id = $1 AND role_key = $2', [projectId, roleKey]);
  return rows.length > 0;
}

export async function projectRoles(db: Queryable, projectId: string): Promise<Array<{ role_key: string; display_name: string }>> {
  const { rows } = await db.query<{ role_key: string; display_name: string }>(
    'SELECT role_key, display_name FROM project_roles WHERE project_id = $1 ORDER BY role_key',
    [projectId],
  );
  return rows;
}

/** Whether another project of the org already has this name (names are unique within an org). */
export async function projectNameTaken(db: Queryable, orgId: string, name: string, exceptId?: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM projects WHERE org_id = $1 AND name = $2 AND id IS DISTINCT FROM $3', [orgId, name, exceptId ?? null]);
  return rows.length > 0;
}

export async function renameProject(write: Write, project: { id: string; orgId: string; name: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: project.id,
    type: 'project.changed',
    resourceOwner: project.orgId,
    payload: { name: project.name },
  });
  await write.tx.query('UPDATE projects SET name = $2, sequence = $3, change_date = $4 WHERE id = $1', [project.id, project.name, sequence, write.at]);
}

/**
 * Removes a project with its roles and the user grants on it, each grant
 * with an event of its own (the user's aggregate changes too). Its apps
 * must be removed before, with their own events.
 */
export async function removeProject(write: Write, project: { id: string; orgId: string; name: string }): Promise<void> {
  const { rows: grants } = await write.tx.query<{ id: string; user_id: string; org_id: string }>(
    'SELECT id, user_id, org_id FROM user_grants WHERE project_id = $1 ORDER BY id',
    [project.id],
  );
  for (const grant of grants) {
    await write.append({
      aggregateType: 'usergrant',
      aggregateId: grant.id,
      type: 'user.grant.cascade.removed',
      resourceOwner: grant.org_id,
      payload: { userId: grant.user_id, projectId: project.id },
    });
  }
  await write.append({
    aggregateType: 'project',
    aggregateId: project.id,
    type: 'project.removed',
    resourceOwner: project.orgId,
    payload: { name: project.name },
  });
  // Roles and grants go with the project (ON DELETE CASCADE).
  await write.tx.query('DELETE FROM projects WHERE id = $1', [project.id]);
}

export async function changeProjectRole(write: Write, role: { projectId: string; orgId: string; roleKey: string; displayName: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: role.projectId,
    type: 'project.role.changed',
    resourceOwner: role.orgId,
    payload: { roleKey: role.roleKey, displayName: role.displayName },
  });
  await write.tx.query('UPDATE project_roles SET display_name = $3 WHERE project_id = $1 AND role_key = $2', [role.projectId, role.roleKey, role.displayName]);
  await write.tx.query('UPDATE projects SET sequence = $2, change_date = $3 WHERE id = $1', [role.projectId, sequence, write.at]);
}

/** Removes a role and takes it out of every user grant on the project. */
export async function removeProjectRole(write: Write, role: { projectId: string; orgId: string; roleKey: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: role.projectId,
    type: 'project.role.removed',
    resourceOwner: role.orgId,
    payload: { roleKey: role.roleKey },
  });
  const { rows: grants } = await write.tx.query<{ id: string; user_id: string; org_id: string; role_keys: string[] }>(
    'SELECT id, user_id, org_id, array_remove(role_keys, $2) AS role_keys FROM user_grants WHERE project_id = $1 AND $2 = ANY (role_keys) ORDER BY id',
    [role.projectId, role.roleKey],
  );
  for (const grant of grants) {
    const grantSequence = await write.append({
      aggregateType: 'usergrant',
      aggregateId: grant.id,
      type: 'user.grant.cascade.changed',
      resourceOwner: grant.org_id,
      payload: { userId: grant.user_id, projectId: role.projectId, roleKeys: grant.role_keys },
    });
    await write.tx.query('UPDATE user_grants SET role_keys = $2, sequence = $3, change_date = $4 WHERE id = $1', [
      grant.id,
      grant.role_keys,
      grantSequence,
      write.at,
    ]);
  }
  await write.tx.query('DELETE FROM project_roles WHERE project_id = $1 AND role_key = $2', [role.projectId, role.roleKey]);
  await write.tx.query('UPDATE projects SET sequence = $2, change_date = $3 WHERE id = $1', [role.projectId, sequence, write.at]);
}

export async function appIdsOfProject(db: Queryable, projectId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM apps WHERE project_id = $1 ORDER BY id', [projectId]);
  return rows.map((r) => r.id);
}
