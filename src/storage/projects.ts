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
